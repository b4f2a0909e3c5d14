package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentrt/agentrt"
)

// The shop's support agent: it looks orders up and refunds small ones.

// OrderIn is the input of order_status.
type OrderIn struct {
	OrderID string `json:"order_id" jsonschema:"description=The order id: A100 for example" validate:"required"`
}

// Order is what order_status returns.
type Order struct {
	ID     string  `json:"id"`
	Item   string  `json:"item"`
	Total  float64 `json:"total_usd"`
	Status string  `json:"status"`
}

// RefundIn is the input of refund.
type RefundIn struct {
	OrderID string  `json:"order_id" validate:"required"`
	Amount  float64 `json:"amount_usd" jsonschema:"description=The amount to refund in US dollars" validate:"gt=0"`
	Reason  string  `json:"reason"`
}

var orders = map[string]Order{
	"A100": {ID: "A100", Item: "wireless headphones", Total: 120, Status: "delivered"},
	"A200": {ID: "A200", Item: "laptop", Total: 1400, Status: "delivered"},
	"A300": {ID: "A300", Item: "paperback book", Total: 25, Status: "shipped"},
}

// Instructions is the agent's system prompt. A change to it shows in the
// evals' cassettes: their replay fails, naming the changed field.
const Instructions = `You are the support agent of a small online shop.
Look an order up with order_status before you answer anything about it.
You may refund a delivered order, up to 500 USD, with refund.
Never refund more than 500 USD or an order that is not delivered: say that a person from the team will follow up.
Answer in one or two short sentences.`

// NewAgent returns the support agent on planner p.
func NewAgent(p agentrt.Planner) *agentrt.Agent {
	status := agentrt.NewTool("order_status", "Look up an order: item, total and delivery status.",
		func(_ context.Context, in OrderIn) (Order, error) {
			o, ok := orders[strings.ToUpper(in.OrderID)]
			if !ok {
				return Order{}, fmt.Errorf("no order %q", in.OrderID)
			}
			return o, nil
		}, agentrt.ReadOnly())
	refund := agentrt.NewTool("refund", "Refund part or all of a delivered order.",
		func(_ context.Context, in RefundIn) (string, error) {
			o, ok := orders[strings.ToUpper(in.OrderID)]
			if !ok {
				return "", fmt.Errorf("no order %q", in.OrderID)
			}
			if in.Amount > o.Total {
				return "", fmt.Errorf("%.2f USD is more than the order's total of %.2f USD", in.Amount, o.Total)
			}
			return fmt.Sprintf("refunded %.2f USD on order %s", in.Amount, o.ID), nil
		})
	return &agentrt.Agent{
		Name:         "support",
		Instructions: Instructions,
		Tools:        []agentrt.Tool{status, refund},
		Planner:      p,
		Permission:   agentrt.AllowAll(),
		MaxTurns:     6,
	}
}
