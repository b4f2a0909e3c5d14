// Package agentslog logs an agent's runs with log/slog, through
// [agentrt.Hooks]: one record per planner call, per tool call and per run.
// Package agentotel does the same with OpenTelemetry spans.
package agentslog

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/internal/textcut"
)

// Hooks returns hooks that log to logger: one record per planner call and
// per tool call, and one per run, with the session, turn, tool, duration,
// tokens and error.
//
// Levels: Info for what went well, Warn for a tool that failed (the model
// sees it and goes on), Error for a failed planner call. Message content
// (user text, model text, tool inputs and outputs) is never logged at Info
// or above; at Debug the planner's answer and each tool's input and output
// are added, shortened. Nothing agentrt has ever holds an API key, so none
// can be logged. A nil logger means slog.Default().
func Hooks(logger *slog.Logger) agentrt.Hooks {
	if logger == nil {
		logger = slog.Default()
	}
	return agentrt.Hooks{
		BeforePlan: func(ctx context.Context, req *agentrt.ModelRequest) (context.Context, error) {
			return context.WithValue(ctx, planStartKey{}, time.Now()), nil
		},
		AfterPlan: func(ctx context.Context, req *agentrt.ModelRequest, resp *agentrt.ModelResponse, err error) {
			logPlan(ctx, logger, req, resp, err)
		},
		AfterTool: func(ctx context.Context, call *agentrt.ToolCall, res *agentrt.ToolResult) {
			logTool(ctx, logger, call, res)
		},
		OnRunEnd: func(ctx context.Context, run *agentrt.RunInfo, done agentrt.Done, err error) {
			logRunEnd(ctx, logger, run, done, err)
		},
	}
}

// logPlan logs a planner call, timed from BeforePlan, and at debug level
// its answer.
func logPlan(ctx context.Context, logger *slog.Logger, req *agentrt.ModelRequest, resp *agentrt.ModelResponse, err error) {
	start, _ := ctx.Value(planStartKey{}).(time.Time)
	attrs := []slog.Attr{
		slog.String("session", req.SessionID),
		slog.Int("turn", req.Turn),
		slog.Int("messages", len(req.Messages)),
		slog.Duration("duration", time.Since(start)),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
		logger.LogAttrs(ctx, slog.LevelError, "agentrt: planner call failed", attrs...)
		return
	}
	attrs = append(attrs,
		slog.Int("input_tokens", resp.Usage.InputTokens),
		slog.Int("output_tokens", resp.Usage.OutputTokens),
		slog.String("finish", string(resp.Finish)),
		slog.Int("tool_calls", countToolUses(resp.Message)),
	)
	if resp.Model != "" {
		attrs = append(attrs, slog.String("model", resp.Model))
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "agentrt: planner call", attrs...)
	if logger.Enabled(ctx, slog.LevelDebug) {
		logger.LogAttrs(ctx, slog.LevelDebug, "agentrt: planner answer",
			slog.String("session", req.SessionID), slog.Int("turn", req.Turn),
			slog.String("content", textcut.Ellipsis(resp.Message.String(), 2000)))
	}
}

// logTool logs a tool call, and at debug level its input and output.
func logTool(ctx context.Context, logger *slog.Logger, call *agentrt.ToolCall, res *agentrt.ToolResult) {
	attrs := []slog.Attr{
		slog.String("session", call.SessionID),
		slog.Int("turn", call.Turn),
		slog.String("tool", call.Tool.Name),
		slog.String("tool_use_id", call.ToolUseID),
		slog.Duration("duration", res.Duration),
		slog.Bool("is_error", res.Message.IsError),
	}
	level := slog.LevelInfo
	if res.Message.IsError {
		level = slog.LevelWarn
		if res.Err != nil {
			attrs = append(attrs, slog.String("error", res.Err.Error()))
		}
	}
	logger.LogAttrs(ctx, level, "agentrt: tool call", attrs...)
	if logger.Enabled(ctx, slog.LevelDebug) {
		logger.LogAttrs(ctx, slog.LevelDebug, "agentrt: tool call content",
			slog.String("session", call.SessionID), slog.String("tool_use_id", call.ToolUseID),
			slog.String("input", textcut.Ellipsis(string(call.RawInput), 2000)),
			slog.String("output", textcut.Ellipsis(res.Message.Content, 2000)))
	}
}

// logRunEnd logs the end of a run.
func logRunEnd(ctx context.Context, logger *slog.Logger, run *agentrt.RunInfo, done agentrt.Done, err error) {
	attrs := []slog.Attr{
		slog.String("session", run.SessionID),
		slog.String("reason", string(done.Reason)),
		slog.Int("turns", done.Turns),
		slog.Int("input_tokens", done.Usage.InputTokens),
		slog.Int("output_tokens", done.Usage.OutputTokens),
		slog.Duration("duration", time.Since(run.Start)),
	}
	if run.Agent != "" {
		attrs = append(attrs, slog.String("agent", run.Agent))
	}
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelError
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	logger.LogAttrs(ctx, level, "agentrt: run", attrs...)
}

type planStartKey struct{}

func countToolUses(m agentrt.Message) int {
	n := 0
	for _, b := range m.Blocks {
		if b.Type == agentrt.BlockToolUse {
			n++
		}
	}
	return n
}
