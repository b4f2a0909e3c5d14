// Package cachebench measures how much of each request the provider
// adapters send is a byte-identical prefix of the request before it: the
// part a prompt cache can serve. Its test and benchmark run a scripted
// 200-turn session (tools, parallel calls, a Window or summarizing
// compaction, and the memory module's recall hook, memory.Hook) through
// the OpenAI Chat Completions and Responses, Anthropic and Gemini adapters
// against httptest servers. Before every call the hook searches a memory
// held in the process (memory/sqlitemem on ":memory:", no server; eight
// facts) with the last user message, whose question turns to another
// topic from run to run, and appends what it found as one user message
// under memory.RecallHeading, for that call only (and records it in the
// session):
//
//	go test ./examples/cachebench/
//	go test -run '^$' -bench . ./examples/cachebench/
//
// The prompt of a request is read from the body the adapter sent, in the
// order of the vendor's prompt: for Anthropic, as documented, the tools,
// the system prompt, then each block of each message; for OpenAI and
// Gemini, which document no order, the system prompt, the tools, then the
// messages (Gemini's by part; Responses: the developer message, the
// tools, the input items). Fields that are not prompt (model,
// max_tokens, stream, prompt_cache_key) and the cache_control markers are
// left out. Tokens are estimated as bytes/4. The cached share of a request
// is its longest run of leading parts equal to the previous request's;
// for Anthropic, only up to the previous request's last breakpoint within
// that run, since the API caches at breakpoints. A turn "breaks" when the
// previous request's prefix, without its per-call tail (the message of
// memory.Hook, a text starting with the line memory.RecallHeading), is not
// the start of this one.
package cachebench
