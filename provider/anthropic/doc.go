// Package anthropic is the [agentrt.Planner] for Anthropic's Claude
// models, on the official Go SDK (github.com/anthropics/anthropic-sdk-go/v2)
// and its Messages API (POST /v1/messages).
//
// # Use
//
// Pass the SDK client you already configured (API key, base URL, proxy,
// HTTP client, middleware, retries) to [New], or let [NewFromAPIKey] build
// one:
//
//	client := sdk.NewClient(option.WithAPIKey(key)) // sdk is anthropic-sdk-go/v2
//	ag := &agentrt.Agent{
//		Tools:   tools,
//		Planner: anthropic.New(client, "claude-sonnet-4-5", nil),
//	}
//
// A [Provider] is safe for concurrent use by any number of agents.
//
// # What is mapped
//
// Request (agentrt → API):
//
//   - ModelRequest.System → "system" (one text block); empty means none.
//   - User messages → "user" messages with one text block.
//   - Assistant messages → "assistant" messages with "text" and "tool_use"
//     blocks (id, name, input as the model sent it; an empty input is {}).
//   - User messages → "user" messages: the text, then each block of
//     Blocks: text; an image as "image" (base64 for image/jpeg, image/png,
//     image/gif and image/webp, or a URL source); a document as "document"
//     (application/pdf as base64 or a URL, text/plain as a text source; the
//     Name as "title"). Any other media type is refused before sending,
//     with [agentrt.ErrUnsupportedContent].
//   - Assistant thinking blocks (agentrt.BlockThinking) whose Provider is
//     "anthropic" → "thinking" (text and signature) or, when Redacted,
//     "redacted_thinking" (the Signature is its data), in their place
//     before the blocks that followed them, as the API requires during
//     tool use. Thinking blocks of another provider, and Gemini signatures
//     on other blocks, are not sent. Sessions written before thinking
//     blocks existed carried the thinking in the Signature of the block
//     after it; it is still sent back.
//   - Tool results → "tool_result" blocks (tool_use_id, content as a text
//     block followed by the result's images and documents, mapped as for
//     user messages, "is_error": true for failures). All results of one
//     assistant turn go back together in the next user message, in the
//     order of the calls, followed by any user text, as the API requires:
//     consecutive messages of one API role are merged into one.
//   - Empty texts, texts of whitespace alone (in any message) and empty
//     assistant messages are left out (the API refuses them); a
//     conversation left without any message is refused before sending,
//     with [agentrt.ErrInvalidRequest]. A tool_use input that is not a JSON object (only
//     possible in a session written by another provider) is sent as {}.
//     A tool_use id with characters the API refuses (Kimi's
//     "functions.add:0") is sent, in the call and its result, with them
//     replaced by _ and a hash of the id appended (then _2, _3, ... if
//     that is another id of the request already).
//     A conversation that ends with an assistant message (continuing a
//     turn paused with pause_turn) has that message's trailing thinking
//     left out and the whitespace at the end of its text trimmed, which
//     the API refuses there.
//   - ModelRequest.Tools → custom tools: name, description, and the input
//     schema unchanged (compacted). The Messages API takes JSON Schema as it
//     is, so nested structs, slices of structs, enums, optional pointers and
//     maps reflected by agentrt.NewTool go through untouched; only the
//     top level is checked to be an object schema. No tools, no "tools".
//   - ModelRequest.ToolChoice → "tool_choice": zero not sent (the model
//     decides, and may call several tools in one answer); "auto" → auto;
//     "none" → none; "required" → any; "tool" → tool with the name.
//   - [Options].ServerTools → after the agent's tools, as given; one named
//     like a tool of the agent (an Anthropic-defined tool the agent runs:
//     memory, the text editor, bash) is sent in that tool's place.
//   - Prompt caching, on unless [Options].NoCache (or a top-level
//     "cache_control" in ExtraFields, automatic caching): "cache_control"
//     ephemeral on the end of the system prompt (which caches the tools
//     before it; on the agent's last tool when there is no system prompt)
//     and on the last block of each of the last two messages of the
//     session (not on thinking): a trailing user message that follows
//     tool results or the user's own message, such as a recall hook's
//     facts, is this call's only and is left after the breakpoint, so the
//     next call, which has other facts there, still reads the prefix. That
//     is 3 breakpoints of the 4 the API allows. A compaction rewrites the
//     messages, but the system prompt and tools stay cached. Each call of
//     an agent loop then reads the prefix the call before wrote; a
//     recorded pair of calls of a 16k-token prompt costs $0.0652 instead
//     of $0.0965 at Sonnet prices, and each later call a tenth of its
//     input.
//   - ModelRequest.MaxTokens → "max_tokens"; 0 means [Options].MaxTokens,
//     then [DefaultMaxTokens].
//   - ModelRequest.ResponseSchema → "output_config.format" (native
//     structured output, type json_schema), the schema transformed by the
//     SDK's own rules for structured output (objects closed with
//     additionalProperties false, unsupported keywords moved into the
//     description).
//   - [Options].Temperature → "temperature" (see the caveat on the field:
//     API version 2026-10-21, which SDK v2 sends, refuses it).
//   - [Options].ExtraFields → merged into the top level of the body, for
//     what is not modeled: "thinking", "metadata", "service_tier",
//     "stop_sequences" and so on.
//
// Response (API → agentrt):
//
//   - "text" blocks → text blocks; "tool_use" blocks → tool_use blocks with
//     the input as compact JSON ({} when empty).
//   - stop_reason → Finish: end_turn and stop_sequence → FinishStop;
//     tool_use → FinishToolUse; max_tokens and model_context_window_exceeded
//     → FinishLength; refusal → FinishContentFilter; pause_turn (a long
//     server tool turn the API paused) and anything new → FinishOther.
//   - usage → Usage: InputTokens is the whole input, input_tokens +
//     cache_creation_input_tokens + cache_read_input_tokens (Anthropic's
//     input_tokens alone leaves the cached part out); CacheReadTokens and
//     CacheWriteTokens are the cached parts; OutputTokens is output_tokens;
//     ReasoningTokens is output_tokens_details.thinking_tokens. When the
//     API compacted the context, the "compaction" entries of
//     usage.iterations, which the top-level counts leave out, are added.
//   - model → Model.
//   - "thinking" and "redacted_thinking" blocks → thinking blocks
//     (Provider "anthropic"; the signature, or the redacted data, in
//     Signature), in their place, kept in the session so that a resumed
//     session sends them back. Thinking text is not passed to OnText.
//
// # Streaming
//
// When ModelRequest.OnText is set, Plan streams and calls OnText with
// each text_delta, on the calling goroutine. input_json_delta fragments are
// assembled per content block, and the message returned is the one the
// non-streaming call would return. In a stream, usage is taken from
// message_start and replaced by the cumulative counts of message_delta.
// Blocks (and a stop reason) that message_start already holds are the
// first blocks of the message. A repeated message_start of the same
// message is ignored; the start of another message within the first is an
// error.
//
// A stream must be complete: message_start, every content block stopped,
// a stop_reason and message_stop. A stream that is cut off (mid tool call
// or anywhere else), lacks a stop reason, carries an event that does not
// parse, or gives a tool input that is not valid JSON is an error of kind
// [agentrt.ErrBadResponse], never a partial success. The one exception is
// a tool input cut short by max_tokens: that call never completed, so it is
// left out of the message and Finish is FinishLength.
//
// The SDK reads a field of the wrong type as its zero value; the adapter
// checks the fields it reads first, so a reply (or an event) with a text,
// a block, a stop reason or a token count of the wrong type, or a count
// that is negative or not an integer, is ErrBadResponse too, not an answer
// with that field left out.
//
// # Errors and retries
//
// Failures are returned as [*agentrt.ProviderError] (the SDK's *Error in
// its Err, for errors.As):
//
//   - 429, rate_limit_error → [agentrt.ErrRateLimited], with RetryAfter
//     from Retry-After-Ms or Retry-After;
//   - 5xx, 529, overloaded_error, api_error, 408, connection failures →
//     [agentrt.ErrOverloaded];
//   - 401, 403, authentication_error, permission_error → [agentrt.ErrAuth];
//   - a 400 saying the prompt is too long ("prompt is too long: N tokens >
//     M maximum", "input length and `max_tokens` exceed context limit"),
//     and 413 request_too_large → [agentrt.ErrContextLength];
//   - other 4xx → [agentrt.ErrInvalidRequest];
//   - an "error" event inside a stream, or an error body received with
//     HTTP 200, is classified by its type (its StatusCode is 0).
//
// Retries happen in one place. An [agentrt.Agent] retries a retryable
// ProviderError itself (Agent.Retry, 3 attempts by default, honouring
// RetryAfter up to its MaxDelay), so the client [NewFromAPIKey] builds does
// not retry. A client you pass to [New] keeps its own setting, and
// sdk.NewClient's default is 2 retries of each attempt: build it with
// option.WithMaxRetries(0), or set [Options].MaxRetries to -1, to keep the
// calls at one per attempt (or set Agent.Retry.MaxAttempts to 1 and let the
// SDK retry). The SDK's retries, when on, cover connection errors, 408, 409,
// 429 and 5xx, with exponential backoff and jitter, honouring Retry-After.
// A stream that fails after it began is not retried. A cancelled context
// ends the call at once, closing the HTTP stream, and Plan returns an
// error wrapping ctx.Err().
//
// # What is not mapped yet
//
//   - Turning thinking on: there is no option for it; use ExtraFields
//     ("thinking"). Thinking text is not streamed as an event.
//   - The blocks of server tools (web search, code execution, MCP, tool
//     search, ...: declared with ServerTools or ExtraFields) and
//     compaction blocks: they are left out of the message, so a later
//     request does not send them back (the API accepts the turn without
//     them; without its compaction block, the next request carries the
//     whole history again), so a turn paused with pause_turn goes back
//     without its server tool calls, which the model may make again;
//     citations; the Files API (file sources); 1-hour cache TTL;
//     strict tool schemas; stop_details; token counting
//     (/v1/messages/count_tokens).
package anthropic
