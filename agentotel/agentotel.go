// Package agentotel traces agentrt runs with OpenTelemetry: a span per run,
// turn, model call and tool call, named and attributed after the
// OpenTelemetry semantic conventions for generative AI (gen_ai.*).
//
//	ag.Hooks = append(ag.Hooks, agentotel.Hooks(otel.GetTracerProvider()))
//
// Spans:
//
//	invoke_agent {agent}        one per Run: gen_ai.operation.name, gen_ai.agent.name,
//	                            gen_ai.conversation.id (the session), usage totals
//	  agentrt.turn {n}          one per turn: a planner call and its tools
//	    chat {model}            one per planner attempt: gen_ai.request.model,
//	                            gen_ai.provider.name, gen_ai.usage.input_tokens,
//	                            gen_ai.usage.output_tokens, gen_ai.response.finish_reasons
//	    execute_tool {tool}     one per executed tool call: gen_ai.tool.name,
//	                            gen_ai.tool.call.id, gen_ai.tool.type
//
// The tool's context carries its span, so spans the tool makes itself nest
// under its call. Failures are recorded on the spans (RecordError and an
// Error status). No message content is put on spans.
//
// The package is separate so that the root package does not depend on
// OpenTelemetry.
package agentotel

import (
	"context"
	"fmt"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentrt/agentrt"
)

// ScopeName is the instrumentation scope of the tracer.
const ScopeName = "github.com/agentrt/agentrt/agentotel"

// Attribute keys of the GenAI semantic conventions used here.
const (
	OperationName       = attribute.Key("gen_ai.operation.name")
	ProviderName        = attribute.Key("gen_ai.provider.name")
	RequestModel        = attribute.Key("gen_ai.request.model")
	ResponseModel       = attribute.Key("gen_ai.response.model")
	ResponseFinish      = attribute.Key("gen_ai.response.finish_reasons")
	UsageInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	UsageOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	AgentName           = attribute.Key("gen_ai.agent.name")
	ConversationID      = attribute.Key("gen_ai.conversation.id")
	ToolName            = attribute.Key("gen_ai.tool.name")
	ToolCallID          = attribute.Key("gen_ai.tool.call.id")
	ToolType            = attribute.Key("gen_ai.tool.type")
	ErrorType           = attribute.Key("error.type")
	StopReason          = attribute.Key("agentrt.stop_reason")
	Turn                = attribute.Key("agentrt.turn")
	ToolIsError         = attribute.Key("agentrt.tool.is_error")
	UsageCacheReadToken = attribute.Key("gen_ai.usage.cache_read.input_tokens")
)

type runInfoKey struct{}

// Hooks returns hooks that trace runs with tracers from tp. A nil tp
// panics.
func Hooks(tp trace.TracerProvider) agentrt.Hooks {
	if tp == nil {
		panic("agentotel: nil TracerProvider")
	}
	tracer := tp.Tracer(ScopeName)
	return agentrt.Hooks{
		OnRunStart: func(ctx context.Context, run *agentrt.RunInfo) context.Context {
			name := "invoke_agent"
			if run.Agent != "" {
				name += " " + run.Agent
			}
			attrs := []attribute.KeyValue{OperationName.String("invoke_agent"), ConversationID.String(run.SessionID)}
			if run.Agent != "" {
				attrs = append(attrs, AgentName.String(run.Agent))
			}
			attrs = append(attrs, providerAttrs(run.Provider)...)
			ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
			return context.WithValue(withIDs(ctx, span), runInfoKey{}, run)
		},
		OnRunEnd: func(ctx context.Context, _ *agentrt.RunInfo, done agentrt.Done, err error) {
			span := trace.SpanFromContext(ctx)
			span.SetAttributes(
				StopReason.String(string(done.Reason)),
				UsageInputTokens.Int(done.Usage.InputTokens),
				UsageOutputTokens.Int(done.Usage.OutputTokens),
			)
			if err == nil {
				err = done.Err()
			}
			fail(span, err)
			span.End()
		},
		OnTurnStart: func(ctx context.Context, _ *agentrt.RunInfo, turn int) context.Context {
			ctx, _ = tracer.Start(ctx, "agentrt.turn "+strconv.Itoa(turn), trace.WithAttributes(Turn.Int(turn)))
			return ctx
		},
		OnTurnEnd: func(ctx context.Context, _ *agentrt.RunInfo, _ int) {
			trace.SpanFromContext(ctx).End()
		},
		BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
			var info agentrt.ProviderInfo
			if run, ok := ctx.Value(runInfoKey{}).(*agentrt.RunInfo); ok {
				info = run.Provider
			}
			name := "chat"
			if info.Model != "" {
				name += " " + info.Model
			}
			attrs := append([]attribute.KeyValue{OperationName.String("chat"), Turn.Int(req.Turn)}, providerAttrs(info)...)
			ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
			return withIDs(ctx, span), nil
		},
		AfterPlan: func(ctx context.Context, _ *agentrt.ModelRequest, resp *agentrt.ModelResponse, err error) {
			span := trace.SpanFromContext(ctx)
			if resp != nil {
				span.SetAttributes(
					UsageInputTokens.Int(resp.Usage.InputTokens),
					UsageOutputTokens.Int(resp.Usage.OutputTokens),
					ResponseFinish.StringSlice([]string{string(resp.Finish)}),
				)
				if resp.Usage.CacheReadTokens > 0 {
					span.SetAttributes(UsageCacheReadToken.Int(resp.Usage.CacheReadTokens))
				}
				if resp.Model != "" {
					span.SetAttributes(ResponseModel.String(resp.Model))
				}
			}
			fail(span, err)
			span.End()
		},
		BeforeTool: func(ctx context.Context, call *agentrt.ToolCall) (context.Context, error) {
			ctx, span := tracer.Start(ctx, "execute_tool "+call.Tool.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
				OperationName.String("execute_tool"),
				ToolName.String(call.Tool.Name),
				ToolCallID.String(call.ToolUseID),
				ToolType.String("function"),
			))
			return withIDs(ctx, span), nil
		},
		AfterTool: func(ctx context.Context, _ *agentrt.ToolCall, res *agentrt.ToolResult) {
			span := trace.SpanFromContext(ctx)
			span.SetAttributes(ToolIsError.Bool(res.Message.IsError))
			if res.Message.IsError {
				err := res.Err
				if err == nil {
					err = fmt.Errorf("tool error: %s", res.Message.Content)
				}
				fail(span, err)
			}
			span.End()
		},
	}
}

// withIDs gives the runtime the span's ids, which it writes into the
// session's trace records (agentrt.WithTraceSpan), so that a session line
// leads to its span.
func withIDs(ctx context.Context, span trace.Span) context.Context {
	sc := span.SpanContext()
	if !sc.IsValid() {
		return ctx
	}
	return agentrt.WithTraceSpan(ctx, sc.TraceID().String(), sc.SpanID().String())
}

func providerAttrs(info agentrt.ProviderInfo) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if info.Name != "" {
		attrs = append(attrs, ProviderName.String(info.Name))
	}
	if info.Model != "" {
		attrs = append(attrs, RequestModel.String(info.Model))
	}
	return attrs
}

func fail(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	span.SetAttributes(ErrorType.String(fmt.Sprintf("%T", err)))
}
