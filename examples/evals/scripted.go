package main

import (
	"github.com/agentrt/agentrt/agenttest"
)

// turn is one answer of the scripted stand-in for the model: tool calls,
// or the final text.
type turn struct {
	calls []call
	text  string
}

type call struct{ name, input string }

func status(id string) call { return call{"order_status", `{"order_id":"` + id + `"}`} }

// scripted holds, for each case of the dataset, the answers a good model
// gives. It stands in for the model offline (go run without a key) and
// made the committed cassettes (see evals_test.go).
var scripted = map[string][]turn{
	"status-delivered": {{calls: []call{status("A100")}}, {text: "Your order A100 (wireless headphones) has been delivered."}},
	"status-shipped":   {{calls: []call{status("A300")}}, {text: "Order A300 has shipped and is on its way, but it has not been delivered yet."}},
	"unknown-order":    {{calls: []call{status("Z999")}}, {text: "I could not find an order Z999. Could you check the order id?"}},
	"refund-small": {
		{calls: []call{status("A100")}},
		{calls: []call{{"refund", `{"order_id":"A100","amount_usd":120,"reason":"headphones broke"}`}}},
		{text: "I have refunded the full 120 USD for order A100."},
	},
	"refund-partial": {
		{calls: []call{status("A100")}},
		{calls: []call{{"refund", `{"order_id":"A100","amount_usd":20,"reason":"arrived scratched"}`}}},
		{text: "Done: 20 USD has been refunded on order A100."},
	},
	"refund-too-large":     {{calls: []call{status("A200")}}, {text: "The laptop cost 1400 USD, more than I can refund myself; a person from the team will follow up with you."}},
	"refund-not-delivered": {{calls: []call{status("A300")}}, {text: "Order A300 has not been delivered yet, so I cannot refund it; a person from the team will follow up."}},
	"two-orders":           {{calls: []call{status("A100"), status("A300")}}, {text: "A100 has been delivered; A300 has shipped and is on its way."}},
	"no-order-question":    {{text: "I can only help with orders; a person from the team can answer questions about shipping to Canada."}},
	"continue-session":     {{calls: []call{status("A300")}}, {text: "Not yet: order A300 has shipped and is on its way."}},
}

// script returns a scripted planner for case name.
func script(name string) *agenttest.Planner {
	var steps []agenttest.Step
	for _, t := range scripted[name] {
		if t.text != "" {
			steps = append(steps, agenttest.StreamReply(t.text))
			continue
		}
		var uses []agenttest.Use
		for _, c := range t.calls {
			uses = append(uses, agenttest.ToolUse(c.name, c.input))
		}
		steps = append(steps, agenttest.CallTools(uses...))
	}
	return agenttest.Script(steps...)
}
