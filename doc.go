// Package agentrt is a small, transparent runtime for AI agents: a model
// that calls typed Go tools in a loop, under a permission checker, with
// every message kept in a session store.
//
// # The loop
//
// [Agent.Run] appends the user's input to the session, then repeats: the
// [Planner] (usually a provider adapter such as OpenAI,
// Anthropic or Gemini) returns the next assistant message; each tool_use in
// it is looked up, its input decoded and validated, checked by the
// [PermissionChecker], and executed; each result is appended to the
// session. The run ends when the model answers without calling a tool, at
// a limit (MaxTurns, the loop guard, the Budget), on a fatal planner or
// store error, or when the context is cancelled. Every step is yielded as
// an [Event], and every run that started ends with [Done] as its last
// event (then the error, if any), saying why and in which [Layer]:
//
//	for ev, err := range ag.Run(ctx, "session-1", "What is 2+40?") {
//		if err != nil {
//			return err // planner or store failure, cancellation
//		}
//		switch e := ev.(type) {
//		case agentrt.TextDelta:
//			fmt.Print(e.Text)
//		case agentrt.Done:
//			fmt.Println(e.Reason, e.Usage)
//		}
//	}
//
// # Two invariants
//
// After every stop (but a pending one, below), and at every yield for each
// turn before the one in progress: (1) every tool_use id in an
// assistant message has exactly one tool result, appended right after that
// message, before the next planner call; (2) an unknown tool, invalid
// input, a denied permission, a tool error, panic or timeout, and
// cancellation during a tool all become is_error tool results
// that the model sees. Neither breaks the message chain, so a session can
// always be sent to a model again. An assistant message with tool_uses is
// stored (and synced) before any of its tools runs, and its results, one per
// tool_use and in order, before the next planner call and before [Done]:
// when an event is yielded, every tool_use of an earlier turn has its result
// in the store. The one exception is a run that stops with [StopPending]:
// the calls it leaves to a person ([Decision.Pending]) stay open, recorded as
// pending, until [Agent.Resume] decides them; no planner call happens
// before they are answered. Ids are made unique by construction; see
// [Agent.Run] for how a run ends. docs/loop.md walks through one tool turn,
// function by function.
//
// # Callbacks
//
// A panic in a user callback (planner, tool, decoder, permission checker,
// hook, compressor, token counter) is recovered where it happens and
// becomes that step's failure: an is_error result, a denial, or a run
// error wrapping [*PanicError]. A runtime.Goexit (t.FailNow) on the
// goroutine that ranges over Run ends that goroutine, as Go defines, after
// the run has answered its open calls as interrupted, synced the session
// and unlocked it, so a later Run resumes. A Goexit in a call of a
// parallel group, on a goroutine the runtime started, is contained like a
// panic.
//
// # Tools
//
// [NewTool] turns a typed Go function into a [Tool]. The input's JSON
// Schema is reflected once from the input struct; each call's input is
// decoded (leniently where models slip, strictly where it matters) and
// validated with `validate` tags before the function runs:
//
//	type AddIn struct {
//		A int `json:"a" jsonschema:"description=first addend" validate:"required"`
//		B int `json:"b" validate:"required"`
//	}
//	add := agentrt.NewTool("add", "Add two integers.",
//		func(ctx context.Context, in AddIn) (int, error) { return in.A + in.B, nil },
//		agentrt.ReadOnly())
//
// Tools without [ReadOnly] are write tools.
//
// # Permissions
//
// An Agent without a Permission checker runs read-only tools and denies
// write tools ([AllowReadOnly]): safe by default. [AskOnWrite] asks the
// user about each write call (package terminal asks on a terminal) and
// remembers "always" answers per session; [AllowAll] is for trusted setups;
// any func can be a checker through [PermissionFunc], and may rewrite the
// input it allows.
//
// # Sessions
//
// Messages are appended to the Agent's [SessionStore] as they are produced
// (the default is a [MemoryStore]); running again on the same session id
// continues the conversation. A session left with unanswered tool_uses (a
// crash mid-tool) is repaired with "interrupted" error results before the
// planner sees it; no tool is run again by itself.
//
// # Long sessions
//
// A [Compressor] chooses what the planner sees of a long session; the
// store keeps every message. [Window] keeps the first user message and the
// most recent turns within Agent.ContextTokens; package summarize has a
// (cheaper) model summarize the older part.
//
// # Runtimes
//
// [Agent.Run] is the in-process runtime. Package temporal is a durable one,
// on Temporal workflows: it records every step and can replay a run after
// a crash, and it drives the same loop as Run, not a copy of it.
//
// # Testing
//
// Package agenttest provides a scripted planner, helpers to collect events
// and check the invariants, and conformance suites for stores and
// providers, so an agent can be tested without a network.
package agentrt
