// Package jsonplanner is an [agentrt.Planner] for models without native
// tool calling: the tools and a JSON decision format go in the system
// prompt, and the model's text answer is parsed, checked against the
// request's tools (a tool it offers, arguments that are a JSON object) and
// turned into tool_use blocks, with corrective re-asks when it is not
// usable.
//
//	ag := &agentrt.Agent{Planner: jsonplanner.New(provider, nil), Tools: tools}
package jsonplanner
