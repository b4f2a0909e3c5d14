package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuickstart(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(context.Background(), nil, &out))
	s := out.String()
	assert.Contains(t, s, "planner: scripted (offline")
	assert.Contains(t, s, `-> weather {"city":"Beijing"}`)
	assert.Contains(t, s, `<- {"city":"Shanghai","temp_celsius":17.5,"sky":"cloudy"}`)
	assert.Contains(t, s, "<- 29.5\n")
	assert.Contains(t, s, "assistant: Today it is 12°C in Beijing and 17.5°C in Shanghai; the sum is 29.5°C.\n")
	assert.Contains(t, s, "[complete after 3 turns")
}

// TestQuickstartBuildsNoSDK keeps the README's first command cheap to build:
// the quickstart's packages are the standard library's, agentrt's and its
// few dependencies, never a vendor SDK, MCP or OpenTelemetry.
func TestQuickstartBuildsNoSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/agentrt/agentrt/agenttest")
	for _, d := range deps {
		for _, banned := range []string{"openai", "anthropic", "genai", "google.golang.org/grpc", "modelcontextprotocol", "opentelemetry", "/provider/", "/mcptool", "/agentotel"} {
			assert.NotContains(t, d, banned, "the quickstart imports %s", d)
		}
	}
}
