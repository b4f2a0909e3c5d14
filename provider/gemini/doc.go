// Package gemini adapts Google's Gemini models to agentrt: its [Provider]
// implements [agentrt.Planner] on the official Go SDK,
// google.golang.org/genai, for the Gemini API and for Vertex AI.
//
// Build the SDK client as usual (API key or Google Cloud credentials,
// backend, base URL, HTTP client) and hand it to [New]; or let
// [NewFromAPIKey] build a Gemini API client:
//
//	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI})
//	...
//	ag := &agentrt.Agent{
//		Instructions: "You are a careful assistant.",
//		Tools:        tools,
//		Planner:      gemini.New(client, "gemini-2.5-flash", nil),
//	}
//
// # What is mapped
//
// Requests (Models.GenerateContent, or GenerateContentStream when
// ModelRequest.OnText is set):
//
//   - System → systemInstruction.
//   - User messages → "user" contents with a text part, then a part per
//     block: text, or an image or document as inlineData (bytes and media
//     type) or fileData (URL, for a file uploaded to the Files API or a
//     gs:// URI; it needs the media type). Consecutive user turns (a user
//     message right after tool results, say) are merged into one content,
//     as Gemini wants the roles to alternate.
//   - Assistant messages → "model" contents: text blocks as text parts,
//     tool_use blocks as functionCall parts {id, name, args}, Gemini's
//     thinking blocks that carry a signature as thought parts (an empty
//     thought as "text":""), in block order, each with the thought
//     signature Gemini gave it (see below). Thinking blocks without a
//     signature, and those of another vendor, are not sent. A tool_use
//     input that is not a JSON object (another provider's session) is
//     sent as args {"input": value}, as Gemini takes only objects.
//     Consecutive assistant messages make one "model" content, so that a
//     function call turn always comes right after a user turn.
//   - Tool results → functionResponse parts {id, name, response, parts},
//     all the results of one assistant turn in one "user" content, in the
//     order of the calls (whatever order they finished in). The response
//     object is {"output": content}, or {"error": content} for an
//     is_error result, as Google documents. For Gemini 3 and later the
//     result's images and documents are the function response's parts
//     (multimodal function responses: image/png, image/jpeg, image/webp,
//     application/pdf, text/plain; anything else is refused before
//     sending, with [agentrt.ErrUnsupportedContent]); older models
//     (gemini-2.5-flash...) do not take those, so there each result's
//     media follow its function response in the same user content, as
//     inlineData or fileData parts. The name comes from the tool_use the
//     result answers.
//   - A user message with nothing to send (an empty text, empty text
//     blocks) is sent as {"text":""}, which the API takes (the
//     SDK leaves an empty text out, so such a request sets its own
//     HTTPOptions.ExtrasRequestProvider, which replaces one set on the
//     client for that request). A request without any message is refused
//     before sending, with [agentrt.ErrInvalidRequest].
//   - Tools → one tool with functionDeclarations; each InputSchema is
//     converted by [ToolParameters] to the OpenAPI subset Gemini accepts.
//     No tools, no declarations.
//   - Options.ServerTools (built-in tools the API runs: googleSearch,
//     codeExecution, urlContext...) → the tools after that one, each as given.
//   - ToolChoice → toolConfig.functionCallingConfig: zero not sent (AUTO);
//     "auto" AUTO, "none" NONE, "required" ANY, "tool" ANY with
//     allowedFunctionNames [Name].
//   - MaxTokens → generationConfig.maxOutputTokens (0: Options.MaxTokens,
//     then none, so that the model's own limit applies);
//     Options.Temperature → generationConfig.temperature.
//   - ResponseSchema → responseMimeType "application/json" and
//     responseJsonSchema, which takes JSON Schema as it is, with
//     "propertyOrdering" added to each object schema so that the model
//     writes the fields in the schema's order (a Go struct's field order);
//     the body would otherwise list them alphabetically. Gemini 3 models
//     accept it together with tools; earlier models refuse JSON output with
//     function calling (HTTP 400, [agentrt.ErrInvalidRequest]).
//   - Options.ExtraFields → merged into the body (the SDK's ExtraBody); a
//     "tools" key there replaces the whole tools array.
//
// Answers:
//
//   - The text parts of the first candidate (the one of index 0, wherever
//     it is in the array; other candidates are left out), joined, → one
//     text block (a function call between two texts splits them); thought
//     parts (thought: true) → thinking blocks (Provider "gemini").
//   - functionCall parts → tool_use blocks, the args re-encoded as a JSON
//     object (keys sorted; no args is {}).
//   - Parts the runtime has no block for (executableCode,
//     codeExecutionResult, the toolCall and toolResponse parts of built-in
//     tools, inlineData and fileData output) are left out, with their
//     thought signatures; so are the candidate's groundingMetadata and
//     urlContextMetadata.
//   - finishReason: STOP → FinishStop, or FinishToolUse when the answer
//     calls tools; MAX_TOKENS → FinishLength; SAFETY, RECITATION,
//     BLOCKLIST, PROHIBITED_CONTENT, SPII, the image filters and Vertex
//     AI's MODEL_ARMOR → FinishContentFilter; anything else
//     (MALFORMED_FUNCTION_CALL, OTHER, ...) → FinishOther. A prompt
//     refused by the filter (promptFeedback blockReason, no candidate) is
//     an empty answer with FinishContentFilter.
//   - usageMetadata: InputTokens = promptTokenCount (cached tokens
//     included, as Gemini counts them) + toolUsePromptTokenCount;
//     OutputTokens = candidatesTokenCount + thoughtsTokenCount (thoughts
//     are billed as output); ReasoningTokens = thoughtsTokenCount;
//     CacheReadTokens = cachedContentTokenCount.
//     Streams report running totals: the last one is used. A negative
//     count is [agentrt.ErrBadResponse].
//   - Model = modelVersion, as the API reports it.
//
// # Function call ids
//
// The Gemini API gives most function calls no id. A call without one gets
// "call_<responseId>_<n>", n counting the calls of the answer from 0: the
// same answer always yields the same ids, and ids do not repeat across
// answers. An id the API does give (newer models do) is kept; an answer
// in which two calls have the same id is [agentrt.ErrBadResponse]. Either
// way the id is sent back in functionCall.id and functionResponse.id, and
// results are also paired with their calls by name and position.
//
// # Thought signatures
//
// Gemini 3 models attach an opaque thought signature to the first function
// call of an answer (and to text and thought parts) and refuse a follow-up
// request whose function calls lack it. The signature is kept in the
// block's Signature, with Provider "gemini", so it lives in the session
// (the JSONL store keeps it) and a session resumed in another process
// sends the real signature back. A model turn whose first call has no
// Gemini signature (history from another provider, or a session written
// before signatures were kept) gets Google's documented placeholder
// "skip_thought_signature_validator" on that call, which the API accepts
// at some cost to the model's reasoning.
//
// # Streaming
//
// OnText gets each text part as it arrives, on the calling goroutine.
// Function calls arrive whole on the Gemini API. On Vertex AI, with
//
//	ExtraFields: map[string]any{"toolConfig": map[string]any{
//		"functionCallingConfig": map[string]any{"streamFunctionCallArguments": true}}}
//
// their arguments arrive in pieces (partialArgs with JSON paths), which are
// put together. The streamed answer is the same message as the unstreamed one.
// A stream that ends without a finish reason, or in the middle of a
// function call, or with an undecodable event, is an
// [agentrt.ErrBadResponse] error, never a partial answer; an error event in
// the stream is reported by its status. A reply the SDK cannot decode,
// streamed or not (a field of the wrong JSON type makes the SDK panic; the
// panic is recovered), is an [agentrt.ErrBadResponse] error too.
// Cancelling ctx closes the HTTP stream at once and Plan returns an error
// wrapping ctx.Err().
//
// # Errors and retries
//
// Errors are *[agentrt.ProviderError] with Code set to the google.rpc
// status ("RESOURCE_EXHAUSTED", ...) and Err the SDK's genai.APIError; see
// [Provider.Plan] for the kinds. An invalid API key, which the Gemini
// API reports as HTTP 400 with reason API_KEY_INVALID, is [agentrt.ErrAuth];
// "The input token count (N) exceeds the maximum number of tokens allowed
// (M)." is [agentrt.ErrContextLength]. The delay of the google.rpc.RetryInfo
// error detail (the Gemini API's Retry-After) is the error's RetryAfter.
//
// Retries happen in one place. An [agentrt.Agent] retries a retryable
// ProviderError itself (Agent.Retry, 3 attempts by default, honouring
// RetryAfter up to its MaxDelay), so neither the client [NewFromAPIKey]
// builds nor its Provider retries. A Provider made by [New] retries rate
// limits, overload and server errors [DefaultMaxRetries] times per attempt,
// unless the client has HTTPOptions.RetryOptions (then the SDK retries):
// set [Options].MaxRetries to -1, and leave RetryOptions nil, to keep the
// calls at one per attempt (or set Agent.Retry.MaxAttempts to 1 and let the
// Provider retry, as [Options].MaxRetries says).
//
// # Schemas
//
// Gemini's function declarations take a subset of OpenAPI 3.0, not JSON
// Schema: no $ref, no additionalProperties, no const, string enums only,
// and no object without properties. [ToolParameters] says how a schema
// made by [agentrt.NewTool] (or written by hand) is converted. Maps are the
// notable case: Gemini cannot declare an object with free keys, so a Go map
// field is declared as a string holding a JSON object, which agentrt's
// lenient input decoding turns back into the map.
//
// # Prompt caching
//
// Implicit caching (Gemini 2.5 and later) needs nothing in the request,
// only a stable prefix: a request that begins with the bytes of a recent
// one, past a minimum length that depends on the model, is billed the
// cached part at a discount, reported as cachedContentTokenCount
// (CacheReadTokens). The adapter sends the system instruction and the
// tools the same way on every call (in the order given, their schemas
// byte for byte the same) and the contents in session order, so an
// append-only session keeps its prefix; what a hook adds for one call
// only comes last. Nothing
// needs configuring, and there are no breakpoints to place.
//
// Explicit caching is a second route, for a large fixed context (a
// document, a code base) that many requests share: create the cache with
// the SDK (client.Caches.Create with the model, the contents and a TTL;
// it returns a name "cachedContents/...") and send that name with each
// request through Options.ExtraFields ("cachedContent"). The cache is
// billed per hour of storage, and the API refuses a request that names a
// cache and also sets systemInstruction, tools or toolConfig: those must
// then be in the cache, and ModelRequest.System and Tools left empty
// (which an Agent with tools cannot do). The adapter does not create,
// refresh or delete caches.
//
// # Not mapped yet
//
//   - Images or files in answers (image generation); what built-in tools
//     (Options.ServerTools) return besides the model's text: code and its
//     results, search queries, sources and citations. Their toolCall and
//     toolResponse parts are not sent back in later requests either.
//   - Thinking configuration (thinkingConfig can be set through
//     Options.ExtraFields).
//   - Candidate count, safety settings, explicit cached content
//     (cachedContents: see "Prompt caching"), stop sequences,
//     top-p/top-k, seed: available only through Options.ExtraFields.
//   - Tool names are sent as they are: Gemini wants them to start with a
//     letter or an underscore, which agentrt does not require.
//   - Integers beyond 2^53 in function call arguments lose precision (the
//     SDK decodes arguments as float64).
//   - The Live API, the Interactions API, and token counting.
package gemini
