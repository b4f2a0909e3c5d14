module github.com/agentrt/agentrt/cassette

go 1.26.0

require (
	github.com/stretchr/testify v1.12.1
	gopkg.in/dnaeon/go-vcr.v4 v4.0.8
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	go.yaml.in/yaml/v4 v4.0.0 // indirect
)
