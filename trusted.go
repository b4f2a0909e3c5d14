package agentrt

// The decoders of this package's tools and its ready permission policies
// run no user code (beyond a json.Unmarshaler of the input type), so the
// runtime calls them on the run's own goroutine, with a recover, instead of
// on the worker that contains user callbacks (see contain.go). That keeps
// the JSON decode of a tool's input off the worker's small stack.

// builtinDecoder marks a Tool whose Decode is this package's.
type builtinDecoder interface{ builtinDecode() }

func (*typedTool[In, Out]) builtinDecode() {}
func (*rawTool) builtinDecode()            {}
func (*agentTool) builtinDecode()          {}

// builtinChecker marks a PermissionChecker of this package that calls no
// user code.
type builtinChecker interface{ builtinCheck() }

func (allowReadOnly) builtinCheck() {}
func (allowAll) builtinCheck()      {}
