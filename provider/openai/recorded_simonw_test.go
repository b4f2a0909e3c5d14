package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/provider/openai"
)

// The tests in this file replay exchanges that simonw/llm recorded with
// api.openai.com's Responses API (gpt-5.5, store false, encrypted
// reasoning asked for): several rounds of reasoning and function calls,
// and the follow-up requests the API accepted; see
// testdata/simonw/README.md.

func sw(name string) string { return "simonw/" + name }

// TestRecordedSimonwResponses replays the answers: blocks, usage, finish,
// model.
func TestRecordedSimonwResponses(t *testing.T) {
	t.Parallel()
	const model = "gpt-5.5-2026-04-23"
	rs := func(id string) wantBlock { return withID(thinking(""), id) }
	cases := []recordedCase{
		{
			name: "interleaved round 1", file: sw("interleaved-reasoning-round1.response.json"),
			blocks: []wantBlock{
				rs("rs_0429c1fcf5cbfa350169fabfe62a9c8197914677ea9a2424a0"),
				toolUse("call_I670mAzR6AYszdoqaI96qg0k", "db_lookup", `{"key":"start"}`),
			},
			usage: agentrt.Usage{InputTokens: 88, OutputTokens: 65, ReasoningTokens: 45}, finish: agentrt.FinishToolUse, model: model,
		},
		{
			name: "interleaved round 2", file: sw("interleaved-reasoning-round2.response.json"),
			blocks: []wantBlock{
				rs("rs_0429c1fcf5cbfa350169fabfe83488819788888aaafb2ab1fd"),
				toolUse("call_Uj506iEKjBZWrHPq2C3GDtgr", "db_lookup", `{"key":"7"}`),
			},
			usage: agentrt.Usage{InputTokens: 171, OutputTokens: 118, ReasoningTokens: 98}, finish: agentrt.FinishToolUse, model: model,
		},
		{
			name: "interleaved round 3", file: sw("interleaved-reasoning-round3.response.json"),
			blocks: []wantBlock{
				rs("rs_0429c1fcf5cbfa350169fabfeb569481978703af8553a073b9"),
				toolUse("call_Vik9mkNli8KsnSbHOShapdmG", "db_lookup", `{"key":"step1"}`),
			},
			usage: agentrt.Usage{InputTokens: 302, OutputTokens: 217, ReasoningTokens: 196}, finish: agentrt.FinishToolUse, model: model,
		},
		{
			// One reasoning item, then five parallel calls.
			name: "interleaved round 4", file: sw("interleaved-reasoning-round4.response.json"),
			blocks: []wantBlock{
				rs("rs_0429c1fcf5cbfa350169fabfeff8708197a93aabe0257d06a5"),
				toolUse("call_WbWwKw4J6EXQ7Sn93fgmuZe3", "db_lookup", `{"key":"begin"}`),
				toolUse("call_et3hsNc1ipjCfuBylmAwqkEy", "db_lookup", `{"key":"value"}`),
				toolUse("call_J4rpPS0QEz4CIdsVGKEKG6k3", "db_lookup", `{"key":"the value 7"}`),
				toolUse("call_gd2cYY61KkICSgB6qNd7ZC66", "db_lookup", `{"key":"Begin with the value 7."}`),
				toolUse("call_nInKAmdZObYpqc3OR3WC61K3", "db_lookup", `{"key":"start2"}`),
			},
			usage: agentrt.Usage{InputTokens: 532, OutputTokens: 119, ReasoningTokens: 17}, finish: agentrt.FinishToolUse, model: model,
		},
		{
			name: "round trip round 1", file: sw("round-trip-encrypted-reasoning-round1.response.json"),
			blocks: []wantBlock{
				rs("rs_0f4809b27460351d0169fab21897dc8196960e8680fb72a88d"),
				toolUse("call_uy7tfNVokIN7NjFF6k7OtLyl", "lookup_population", `{"country":"Pundora"}`),
			},
			usage: agentrt.Usage{InputTokens: 94, OutputTokens: 85, ReasoningTokens: 63}, finish: agentrt.FinishToolUse, model: model,
		},
		{
			// No reasoning item at all (reasoning_tokens 0).
			name: "round trip round 2", file: sw("round-trip-encrypted-reasoning-round2.response.json"),
			blocks: []wantBlock{toolUse("call_jwY8kllWAsnoSXtjXZQ5KR6i", "can_have_dragons", `{"population":123124}`)},
			usage:  agentrt.Usage{InputTokens: 192, OutputTokens: 21}, finish: agentrt.FinishToolUse, model: model,
		},
		{
			name: "round trip answer", file: sw("round-trip-encrypted-reasoning-round3.response.json"),
			blocks: []wantBlock{text("Pundora has a population of 123,124 — and yes, it can have dragons.")},
			usage:  agentrt.Usage{InputTokens: 227, OutputTokens: 24}, finish: agentrt.FinishStop, model: model,
		},
		{
			name: "tool use", file: sw("tool-use.response.json"),
			blocks: []wantBlock{toolUse("call_nJmCK7SJe3ajdYYplIbH0KgL", "multiply", `{"a":1231,"b":2331}`)},
			usage:  agentrt.Usage{InputTokens: 58, OutputTokens: 23}, finish: agentrt.FinishToolUse, model: model,
		},
		{
			name: "tool use answer", file: sw("tool-use-followup.response.json"),
			blocks: []wantBlock{text("1231 * 2331 = 2,869,461")},
			usage:  agentrt.Usage{InputTokens: 94, OutputTokens: 17}, finish: agentrt.FinishStop, model: model,
		},
	}
	replayCases(t, cases, fixture, responsesAPI)
}

// simonwConversation plays a recorded conversation of function calls on a
// Responses planner for model gpt-5.5 (the recorded request's), answering
// the calls of each round, in order, with results, and returns the
// server, which holds the adapter's requests.
func simonwConversation(t *testing.T, effort string, prompt string, tools []agentrt.ToolSpec, answers []string, results ...[]string) *replayServer {
	t.Helper()
	replies := make([]reply, len(answers))
	for i, a := range answers {
		replies[i] = reply{body: fixture(t, sw(a))}
	}
	srv := newReplay(t, replies...)
	client := oai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("test-key"))
	p := openai.NewResponses(client, "gpt-5.5", &openai.ResponsesOptions{ReasoningEffort: effort, NoPromptCacheKey: true})
	req := &agentrt.ModelRequest{Messages: []agentrt.Message{agentrt.NewUserMessage(prompt)}, Tools: tools}
	for i := range answers {
		resp, err := p.Plan(context.Background(), req)
		require.NoError(t, err, "round %d", i+1)
		if i == len(results) {
			break
		}
		req.Messages = append(req.Messages, resp.Message)
		calls := resp.Message.ToolUses()
		require.Len(t, calls, len(results[i]), "round %d", i+1)
		for j, c := range calls {
			req.Messages = append(req.Messages, agentrt.NewToolMessage(c.ID, results[i][j], false))
		}
	}
	require.Equal(t, len(answers), srv.count())
	return srv
}

// checkSimonwInput compares the input items the adapter sent with those of
// the recorded request the API accepted, item by item. They must be the
// same but for what the two clients legitimately write differently: the
// user message's content (a string there, a list of one input_text part
// here), a function call's arguments (re-serialized with spaces by the
// recording client; the same JSON) and the call's item id (fc_…), which
// the adapter sends beside a reasoning item that went back and the
// recording client left out. Reasoning items, call ids, names and
// function outputs must be exactly the recorded ones.
func checkSimonwInput(t *testing.T, rec, got []map[string]any) {
	t.Helper()
	require.Len(t, got, len(rec), "input items: %v", got)
	for i := range rec {
		want, sent := rec[i], got[i]
		switch {
		case want["role"] == "user":
			assert.Equal(t, map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": want["content"]}}}, sent, "item %d", i)
		case want["type"] == "function_call":
			sent = cloneItem(sent)
			assert.JSONEq(t, want["arguments"].(string), sent["arguments"].(string), "item %d: arguments", i)
			delete(sent, "arguments")
			want = cloneItem(want)
			delete(want, "arguments")
			if id, ok := sent["id"].(string); ok {
				assert.True(t, strings.HasPrefix(id, "fc_"), "item %d: the call's item id %q", i, id)
				assert.Equal(t, "reasoning", got[i-1]["type"], "item %d: an item id only after its reasoning item", i)
				delete(sent, "id")
			}
			assert.Equal(t, want, sent, "item %d", i)
		default:
			assert.Equal(t, want, sent, "item %d", i)
		}
	}
}

// checkSimonwTools compares the tools the adapter sent with those the API
// echoed in its answer: the recording client sent them without "strict",
// which the API took as strict, adding "additionalProperties": false to
// each schema; the adapter sends them so, as strict schemas.
func checkSimonwTools(t *testing.T, body map[string]any, answer string) {
	t.Helper()
	assert.JSONEq(t, recordedField(t, sw(answer), "tools"), field(t, body, "tools"))
}

func cloneItem(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// gpt-5.5, reasoning effort high, store false: four rounds, each a
// reasoning item (encrypted content only) then function calls. The
// recording client sent every reasoning item back, each just before the
// call that followed it, and the API accepted the growing conversation
// three times; the recorded last request holds the other two as its
// prefixes (their recorded lengths, 2127 and 3967 bytes, are those of the
// last one cut after its 4th and 7th items). The adapter's requests after
// one, two and three rounds must send the same items: the three reasoning
// items with their ids and encrypted content, in their places, the calls
// by their call ids, the outputs.
func TestRecordedSimonwInterleavedReasoning(t *testing.T) {
	t.Parallel()
	const accepted = "interleaved-reasoning-round4.request.json"
	tool := agentrt.ToolSpec{
		Name: "db_lookup", Description: "Look up a value by key in the puzzle database.",
		InputSchema: json.RawMessage(`{"properties":{"key":{"type":"string"}},"required":["key"],"type":"object"}`),
	}
	rec := recordedItems(t, sw(accepted))
	require.Len(t, rec, 10)
	srv := simonwConversation(t, "high", rec[0]["content"].(string), []agentrt.ToolSpec{tool},
		[]string{
			"interleaved-reasoning-round1.response.json", "interleaved-reasoning-round2.response.json",
			"interleaved-reasoning-round3.response.json", "interleaved-reasoning-round4.response.json",
		},
		[]string{"Begin with the value 7."}, []string{"unknown key"}, []string{"unknown key"})

	for i, n := range []int{1, 4, 7, 10} {
		body := srv.request(i).Body
		got := sentItems(t, body)
		checkSimonwInput(t, rec[:n], got)
		for _, k := range []string{"include", "model", "reasoning", "store"} {
			assert.JSONEq(t, recordedField(t, sw(accepted), k), field(t, body, k), "request %d: %s", i, k)
		}
		assert.NotContains(t, body, "previous_response_id", "request %d", i)
		checkSimonwTools(t, body, "interleaved-reasoning-round1.response.json")
	}
	// The first request is the recorded one but for the user message's
	// form and the stream field, which the recording client sets false.
	first := srv.request(0).Body
	var rec0 map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, sw("interleaved-reasoning.request.json")), &rec0))
	assert.Equal(t, false, rec0["stream"])
	for k := range rec0 {
		switch k {
		case "input":
			checkSimonwInput(t, recordedItems(t, sw("interleaved-reasoning.request.json")), sentItems(t, first))
		case "stream":
			assert.NotContains(t, first, k)
		case "tools":
			checkSimonwTools(t, first, "interleaved-reasoning-round1.response.json")
		default:
			assert.JSONEq(t, field(t, rec0, k), field(t, first, k), k)
		}
	}
	for k := range first {
		assert.Contains(t, rec0, k, "a field the recording client did not send")
	}

	// Each encrypted content went back as it came, and each call's item
	// id was the one of its answer.
	last := sentItems(t, srv.request(3).Body)
	for i, a := range []string{"interleaved-reasoning-round1.response.json", "interleaved-reasoning-round2.response.json", "interleaved-reasoning-round3.response.json"} {
		var resp struct {
			Output []map[string]any `json:"output"`
		}
		require.NoError(t, json.Unmarshal(fixture(t, sw(a)), &resp))
		require.Len(t, resp.Output, 2)
		assert.Equal(t, resp.Output[0]["encrypted_content"], last[1+3*i]["encrypted_content"], "round %d", i+1)
		assert.Equal(t, resp.Output[1]["id"], last[2+3*i]["id"], "round %d", i+1)
	}
}

// The same model asked to chain two tools: reasoning then a call, a call
// with no reasoning item (reasoning_tokens 0), then the answer. The
// accepted last request sends the reasoning item before the first call
// only; the second call goes back as recorded, without item id.
func TestRecordedSimonwRoundTripEncryptedReasoning(t *testing.T) {
	t.Parallel()
	const accepted = "round-trip-encrypted-reasoning-round3.request.json"
	tools := []agentrt.ToolSpec{
		{
			Name: "lookup_population", Description: "Returns the current population of the specified fictional country.",
			InputSchema: json.RawMessage(`{"properties":{"country":{"type":"string"}},"required":["country"],"type":"object"}`),
		},
		{
			Name: "can_have_dragons", Description: "Returns True if the specified population can have dragons.",
			InputSchema: json.RawMessage(`{"properties":{"population":{"type":"integer"}},"required":["population"],"type":"object"}`),
		},
	}
	rec := recordedItems(t, sw(accepted))
	require.Len(t, rec, 6)
	srv := simonwConversation(t, "high", rec[0]["content"].(string), tools,
		[]string{
			"round-trip-encrypted-reasoning-round1.response.json", "round-trip-encrypted-reasoning-round2.response.json",
			"round-trip-encrypted-reasoning-round3.response.json",
		},
		[]string{"123124"}, []string{"true"})
	got := sentItems(t, srv.request(2).Body)
	checkSimonwInput(t, rec, got)
	assert.NotContains(t, got[4], "id", "no reasoning item before this call")
	for _, k := range []string{"include", "model", "reasoning", "store"} {
		assert.JSONEq(t, recordedField(t, sw(accepted), k), field(t, srv.request(2).Body, k), k)
	}
	checkSimonwTools(t, srv.request(2).Body, "round-trip-encrypted-reasoning-round3.response.json")
}

// Reasoning effort low, no reasoning item: the call goes back without item
// id, as recorded, and the answer's message id is not kept.
func TestRecordedSimonwToolUse(t *testing.T) {
	t.Parallel()
	const accepted = "tool-use-followup.request.json"
	tool := agentrt.ToolSpec{
		Name: "multiply", Description: "Multiply two numbers.",
		InputSchema: json.RawMessage(`{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object"}`),
	}
	rec := recordedItems(t, sw(accepted))
	srv := simonwConversation(t, "low", rec[0]["content"].(string), []agentrt.ToolSpec{tool},
		[]string{"tool-use.response.json", "tool-use-followup.response.json"}, []string{"2869461"})
	got := sentItems(t, srv.request(1).Body)
	checkSimonwInput(t, rec, got)
	assert.NotContains(t, got[1], "id")
	for _, k := range []string{"include", "model", "reasoning", "store"} {
		assert.JSONEq(t, recordedField(t, sw(accepted), k), field(t, srv.request(1).Body, k), k)
	}
	checkSimonwTools(t, srv.request(1).Body, "tool-use-followup.response.json")
}
