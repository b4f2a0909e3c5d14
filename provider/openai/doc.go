// Package openai is the [agentrt.Planner] for OpenAI's Chat Completions
// API, built on the official SDK, github.com/openai/openai-go/v3. It is
// also the provider for every server that speaks that API: Ollama, vLLM,
// llama.cpp server, LM Studio, DeepSeek, Qwen and others. For OpenAI's
// reasoning models, [NewResponses] is the planner on the Responses API
// (see "Responses API" below).
//
// # Use
//
// With OpenAI, pass your own client (it keeps its key, base URL, HTTP
// client, middleware and retry settings):
//
//	client := oai.NewClient() // OPENAI_API_KEY from the environment
//	ag := &agentrt.Agent{
//		Tools:   tools,
//		Planner: openai.New(client, "gpt-4.1-mini", nil),
//	}
//
// With an OpenAI-compatible server, a base URL and a model name are all it
// takes:
//
//	p := openai.NewCompatible("http://localhost:11434/v1", "ollama", "llama3.2", nil) // Ollama
//
// [Options] sets the temperature, a default token cap, retries, strict
// mode and extra request fields; its zero value (or nil) means defaults.
//
// # What is mapped
//
// Into the request:
//
//   - ModelRequest.System becomes the first message, role "system".
//   - User messages become "user" messages: text content, or, with
//     blocks, content parts: text, image_url (a data: URL for an image's
//     bytes, JPEG, PNG, GIF or WebP, or its http(s) URL), file (a PDF as
//     file_data, with its file name) and input_audio (WAV or MP3). Anything
//     else (a document by URL, a URL that is not one, another media type)
//     is refused before sending, with [agentrt.ErrUnsupportedContent].
//   - An assistant message becomes one "assistant" message: its text
//     blocks joined as content, its tool_use blocks as tool_calls (id,
//     function name, arguments as the input's JSON text; "{}" for none).
//     OpenAI refuses a tool call id longer than 40 characters, and
//     other vendors' can be longer (vLLM's are 46): such an id is sent as
//     "call_" and hex digits of its SHA-256, 40 characters in all, on the
//     call and on its tool message alike; the session keeps its own.
//     The text of its thinking blocks that came from this adapter (a
//     compatible server's reasoning_content or reasoning) is sent back in
//     the field it came in, "reasoning_content" or "reasoning" (Groq
//     refuses the other), for the assistant messages after the last user
//     message (the tool loop of the current turn, where DeepSeek and Z.ai
//     want it); thinking blocks of other vendors are not sent.
//   - The reasoning_details list kept in the Signature of such a thinking
//     block (OpenRouter, MiniMax) is sent back unchanged as
//     "reasoning_details", in every assistant message (so that the request
//     still begins as the one before it did), as OpenRouter's "preserving
//     reasoning blocks" asks (Gemini 3 and Claude with thinking behind it
//     need it), instead of "reasoning_content", which the list holds
//     already (OpenRouter's own follow-ups send the list alone).
//   - A tool_use block that carries a thought signature from this adapter
//     (Gemini's OpenAI-compatible endpoint) sends it back on its tool call
//     as "extra_content":{"google":{"thought_signature":...}}, in every
//     assistant message (Gemini 3 refuses a function call of the current
//     turn without it); signatures of other vendors are not sent.
//   - Each tool result becomes a "tool" message with its tool_call_id,
//     right after the assistant message, as the API requires. The API has
//     no error flag: the content of an is_error result starts with
//     "Error: " (unless it already starts with "error"). A tool message
//     carries text only, so the images and documents of the results of one
//     assistant turn follow its last tool message in one "user" message
//     that names the tool call of each ("Attachments of the result of tool
//     call ID:"), and each such tool message ends with "[N attachment(s) of
//     this tool result follow in the next user message]".
//   - ModelRequest.ToolChoice becomes tool_choice (only with tools): zero
//     not sent, "auto", "none" and "required" as they are, "tool" as
//     {"type":"function","function":{"name":...}}.
//   - Tools become function tools. A schema that strict mode can express
//     is rewritten for it and sent with "strict": true: every object closed
//     with "additionalProperties": false, every property required, the
//     optional ones made nullable (the model then sends null for a field it
//     leaves out, which encoding/json decodes as if it were absent),
//     oneOf turned into anyOf, annotations strict mode refuses ("default",
//     "examples", "$schema", unknown formats...) dropped, property order
//     kept. A schema with a map (additionalProperties as a schema), an
//     open object, or a keyword strict mode refuses (minLength, maxLength,
//     uniqueItems, allOf, patternProperties...) is sent as it is, with
//     "strict": false. [Options].DisableStrict turns strict mode off.
//   - ModelRequest.MaxTokens (or [Options].MaxTokens) becomes
//     max_completion_tokens for OpenAI and max_tokens for compatible
//     servers; ResponseSchema becomes response_format json_schema (strict
//     when the schema allows it); Options.Temperature becomes temperature;
//     Options.ExtraFields are merged into the body last.
//   - With ModelRequest.OnText set, the call streams and asks for usage in
//     the final chunk (stream_options.include_usage).
//
// Out of the reply:
//
//   - reasoning_content (OpenAI-compatible servers: DeepSeek, Z.ai, vLLM,
//     xAI) or reasoning (Groq, Ollama, OpenRouter), and the "thinking"
//     parts of a content that is a list of parts (Mistral), become a
//     thinking block (Provider "openai", Name "reasoning" when it came in
//     that field) before the text; it is not passed to OnText. OpenAI
//     itself returns no reasoning text in Chat Completions. Reasoning in
//     the text itself, between <think> tags (Groq's reasoning_format
//     "raw"), stays text.
//   - reasoning_details (OpenRouter, MiniMax with reasoning_split), a list
//     of reasoning.text, reasoning.summary and reasoning.encrypted items,
//     is kept whole, as raw JSON, in that thinking block's Signature: as
//     sent in a whole message; in a stream, assembled from its fragments (a
//     fragment continues the last item of its type with the same index, or
//     the same id, or, having neither, that last item; text, summary and
//     data are concatenated, other fields taken when present and not
//     empty). Without a reasoning text the block's Text is that of the
//     reasoning.text and reasoning.summary items, and with encrypted items
//     only it is empty and the block Redacted.
//   - The thought signature Gemini's OpenAI-compatible endpoint puts on a
//     tool call (extra_content.google.thought_signature, on the call of a
//     message or on a stream's tool-call delta) goes into the tool_use
//     block's Signature, the string's bytes as sent (base64 text, not
//     decoded), with Provider "openai".
//   - Content becomes a text block (the "text" parts of a list of parts);
//     a refusal becomes a text block too, with FinishContentFilter; tool
//     calls become tool_use blocks in order, their arguments kept as raw
//     JSON ("" becomes {}; arguments that are not valid JSON are kept as a
//     JSON string, so the tool reports the bad input to the model, and are
//     sent back unchanged). The legacy function_call of older servers is
//     a tool call too, with an id made up here.
//   - Streaming: text and refusal deltas go to OnText as they arrive, on
//     the calling goroutine; tool-call fragments are assembled by their
//     index (a fragment with a new id at a used index starts a new call, as
//     some compatible servers send them); the result is the same message
//     the non-streaming call returns. A stream that breaks, holds a
//     malformed chunk or an error event, or ends without a finish reason
//     (in the middle of a tool call or not) is an error, never a partial
//     answer.
//   - A reply with a negative token count, or a
//     field the adapter reads holding a value of another type than the
//     API's (an object for the content, a string for the usage...; a
//     number for a string is read as its text) is an ErrBadResponse, in
//     both APIs, streamed or not. A tool call's arguments sent as a JSON
//     object instead of a string holding one (llama.cpp, Hugging Face
//     TGI) are taken as the input.
//   - finish_reason: stop → FinishStop, tool_calls → FinishToolUse (also
//     "stop" when the message has tool calls, as some servers say),
//     length → FinishLength, content_filter → FinishContentFilter, anything
//     else → FinishOther.
//   - Usage: prompt_tokens → InputTokens (they include the cached ones),
//     completion_tokens → OutputTokens (plus reasoning_tokens where, as
//     from xAI, total_tokens shows they were counted apart),
//     completion_tokens_details.reasoning_tokens → ReasoningTokens; a
//     total_tokens above prompt + completion with no reasoning_tokens
//     (Gemini's OpenAI-compatible endpoint, whose thinking is billed as
//     output) counts the difference as reasoning, in both;
//     prompt_tokens_details.cached_tokens (or DeepSeek's
//     prompt_cache_hit_tokens, Moonshot's usage.cached_tokens, llama.cpp
//     server's timings.cache_n) → CacheReadTokens,
//     prompt_tokens_details.cache_write_tokens →
//     CacheWriteTokens. The reported model name goes to ModelResponse.Model.
//
// # Errors and retries
//
// Failed calls return an [*agentrt.ProviderError] whose Kind works with
// errors.Is: [agentrt.ErrAuth] (401, 403), [agentrt.ErrRateLimited] (429,
// with RetryAfter from Retry-After-Ms or Retry-After),
// [agentrt.ErrOverloaded] (408, 5xx, 529, a server that cannot be reached),
// [agentrt.ErrContextLength] (OpenAI's context_length_exceeded, the
// messages of vLLM, DeepSeek and llama.cpp server, 413),
// [agentrt.ErrInvalidRequest] (other 4xx, and a stream's error event of
// type invalid_request_error, such as Groq's tool_use_failed) and
// [agentrt.ErrBadResponse] (malformed or truncated replies and streams). The error bodies of
// compatible servers (Ollama's {"error":"..."}, vLLM's top-level object,
// plain text) are read for the message. The SDK's own error stays
// reachable with errors.As (*oai.Error).
//
// Retries happen in one place. An [agentrt.Agent] retries a retryable
// ProviderError itself (Agent.Retry, 3 attempts by default, honouring
// RetryAfter up to its MaxDelay), so the client [NewCompatible] builds does
// not retry. A client you pass to [New] keeps its own setting, and
// oai.NewClient's default is 2 retries of each attempt: build it with
// option.WithMaxRetries(0), or set [Options].MaxRetries to -1, to keep the
// calls at one per attempt (or set Agent.Retry.MaxAttempts to 1 and let the
// SDK retry). The SDK's retries, when on, cover connection errors, 408, 409,
// 429 and 5xx, with exponential backoff and jitter, honouring Retry-After
// (up to its limit of two minutes; a longer wait returns the error at once,
// with RetryAfter set). A cancelled context stops the request, the retry
// wait or the stream at once; the error wraps ctx.Err() and is not a
// ProviderError.
//
// # Prompt caching
//
// OpenAI caches a long prompt's prefix by itself and reports the tokens
// read from the cache (CacheReadTokens) and written (CacheWriteTokens). A
// Provider made by New, and a Responses, send a "prompt_cache_key" made
// from ModelRequest.SessionID (a hash of it), so that the calls of one
// session reach the same cache; [Options].PromptCacheKey sets another,
// NoPromptCacheKey sends none. ExplicitCache (in [Options] and
// [ResponsesOptions]) turns on explicit caching: breakpoints at the end of
// the system prompt, of the session's messages and of the previous call's,
// where a trailing user message added for one call only (a recall hook's)
// comes after them.
//
// # Not mapped
//
// Image detail; several choices (n); logprobs; parallel_tool_calls (send
// it with Options.ExtraFields); custom
// (non-function) tools and the legacy function_call; annotations (URL
// citations); audio output. The order of text and tool_use blocks within
// one assistant message is not kept: Chat Completions has one content
// string, sent with all the tool calls.
//
// Files uploaded to OpenAI cannot be referenced by id (file_id), in
// either API: a [agentrt.Block] has no field for an id, and a URL is not
// one. Send the file's bytes (Data) instead, or, with the Responses API,
// its URL.
//
// # Responses API
//
// [NewResponses] makes a planner on the Responses API (POST /v1/responses)
// instead, for OpenAI's own models: there a reasoning model keeps its
// reasoning from one call to the next. It is a type of its own, not an
// option of New, because everything differs but the errors: the request
// (input items, store, include, reasoning), the reply
// (output items), the stream (typed events) and the options.
//
// It is stateless by default: "store": false, and the session is the only
// copy of the conversation. Each reasoning item comes back as a thinking
// block (Provider "openai-responses", ID the item's id, Text its summary
// or, from a server that shows the reasoning itself, its reasoning_text,
// Signature its encrypted content, asked for with include
// "reasoning.encrypted_content") and is sent back as a reasoning item with
// the next requests, from the same process or from a session resumed
// later; except one that a server tool's call (or another item this
// adapter does not send back) followed, which the API would refuse
// without it: its summary is kept as text, the item left out. The
// reasoning items of one assistant message go back together or not at
// all: each must be followed by the text or tool_use block of the item
// that followed it, with that item's id; if one cannot be (no encrypted
// content, nothing after it, a block without this API's item id after
// it, as in a session edited since), none goes back, and the message's
// items go without ids. Beside reasoning, the message and function call
// items keep their ids (msg_…, fc_…, as the Signature of the text and
// tool_use blocks) and go back with them, as the API accepted in a
// recording: it pairs a reasoning item with the item that followed it by
// id. A call id longer than the 64 characters the API takes is sent as
// "call_" and hex digits of its SHA-256, 64 in all, on the function_call
// and its function_call_output. [ResponsesOptions].PreviousResponseID
// stores responses at OpenAI and chains the calls instead (see its
// trade-off).
//
// Mapped as for Chat Completions, with these differences: the system prompt
// is the first input item, a "developer" message (not repeated in a chained
// call: the stored conversation holds it); assistant text goes back as an
// assistant message item and tool_use blocks as function_call items, in
// block order; a tool result is a function_call_output whose output is its
// text, or, with images or PDFs, a list of input_text, input_image and
// input_file parts (the API takes media in tool results); images are
// input_image (a data: URL or a URL), PDFs input_file (file_data with its
// name, or file_url); audio and other media types are refused before
// sending with [agentrt.ErrUnsupportedContent]. The tools OpenAI runs
// itself, [ResponsesOptions].ServerTools (web search, file search, code
// interpreter, remote MCP...), follow the function tools in "tools".
// ToolChoice becomes tool_choice when there is any tool ("tool" as
// {"type":"function","name":...}), ResponseSchema
// text.format json_schema (strict when the schema allows), MaxTokens
// max_output_tokens. Out of the reply: output_text and refusal parts are
// text blocks (a refusal finishes with FinishContentFilter), function_call
// items tool_use blocks; a streamed call hands text and refusal deltas to
// OnText and takes the message, with the function calls' arguments whole,
// from the stream's last event (response.completed or response.incomplete);
// a stream whose text deltas are not that message's text (a delta lost,
// repeated or out of order) is an ErrBadResponse, and one without any
// text delta hands the message's text to OnText once, whole.
// An incomplete response finishes with FinishLength (max_output_tokens) or
// FinishContentFilter; a failed one, or an error event in the stream, is a
// ProviderError with the API's code. Usage: input_tokens, output_tokens,
// reasoning_tokens, cached_tokens and cache_write_tokens. The output items
// of server tools (web_search_call, file_search_call,
// code_interpreter_call, image_generation_call, mcp_list_tools, mcp_call...)
// are not mapped, so not sent back either: the next call has the answer's
// text (and, with PreviousResponseID, the stored response), not the
// search results, the code's output or the generated image. An
// mcp_approval_request that the response leaves unanswered is an error
// (ErrInvalidRequest): nothing could answer it.
package openai
