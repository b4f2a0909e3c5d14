package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/agentrt/agentrt"
)

// maxImageBytes bounds the image read_image returns: the largest image
// the vendors take in one part (Anthropic's limit is 5 MB).
const maxImageBytes = 5 << 20

// ReadImageIn is the input of read_image.
type ReadImageIn struct {
	Path string `json:"path" jsonschema:"description=Image file path relative to the root directory (PNG, JPEG, GIF or WebP)" validate:"required"`
}

// readImageTool returns read_image: the model looks at an image file of
// the workspace (a screenshot, a diagram, a rendered page). The image
// reaches the model as an image part of the tool result, not as text.
func (w *workspace) readImageTool() agentrt.Tool {
	return agentrt.NewTool("read_image", "Look at an image file (PNG, JPEG, GIF or WebP) inside the root directory, such as a screenshot.", w.readImage, agentrt.ReadOnly())
}

func (w *workspace) readImage(_ context.Context, in ReadImageIn) ([]agentrt.Block, error) {
	n, err := w.name(in.Path)
	if err != nil {
		return nil, err
	}
	f, err := w.root.Open(n)
	if err != nil {
		return nil, w.explain(in.Path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%q is a directory: use list_dir", in.Path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxImageBytes+1))
	if err != nil {
		return nil, w.explain(in.Path, err)
	}
	if len(b) > maxImageBytes {
		return nil, fmt.Errorf("%q is larger than %d MB: too large to look at", in.Path, maxImageBytes>>20)
	}
	switch mt := http.DetectContentType(b); mt {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return []agentrt.Block{
			agentrt.TextBlock(fmt.Sprintf("%s (%s, %d bytes):", in.Path, mt, len(b))),
			agentrt.ImageBlock(mt, b),
		}, nil
	default:
		return nil, fmt.Errorf("%q is not a PNG, JPEG, GIF or WebP image (it looks like %s); use read_file for text", in.Path, mt)
	}
}
