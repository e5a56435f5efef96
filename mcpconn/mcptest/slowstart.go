package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// The answer orders of -slow-start: which of the two requests a client
// sent to a server slower to start than its era probe gets its answer
// first.
const (
	// SlowStartDiscoverFirst answers server/discover, then initialize.
	SlowStartDiscoverFirst = "discover-first"
	// SlowStartInitializeFirst answers initialize, and server/discover
	// only once the client closed stdin.
	SlowStartInitializeFirst = "initialize-first"
)

// SlowStartMarker is the file -slow-start writes in the working directory
// at the first start: the starts after it serve at once.
const SlowStartMarker = "slow-start.done"

// maxHeldLines bounds the requests -slow-start holds before initialize.
const maxHeldLines = 64

// slowStart makes a stdio server slower to start than a client's era
// probe, whatever its timeout: at the first start in the working
// directory (no SlowStartMarker there), the server reads nothing until
// the client's initialize request came (a probing client sends it only
// after it gave up waiting for the answer to server/discover), then
// answers in the order asked: discover-first reads initialize only once
// the answer to the requests before it was written; initialize-first
// reads those (and anything after initialize) only once stdin closed,
// so the client sees the answer to initialize alone. Later starts serve
// at once. It returns the stdin and stdout the server uses.
func slowStart(order string, stdin io.Reader, stdout io.Writer) (io.Reader, io.Writer, error) {
	if order != SlowStartDiscoverFirst && order != SlowStartInitializeFirst {
		return nil, nil, fmt.Errorf("unknown -slow-start order %q (%s or %s)", order, SlowStartDiscoverFirst, SlowStartInitializeFirst)
	}
	if _, err := os.Stat(SlowStartMarker); err == nil {
		return stdin, stdout, nil
	}
	if err := os.WriteFile(SlowStartMarker, nil, 0o600); err != nil {
		return nil, nil, err
	}
	br := bufio.NewReader(stdin)
	var held, init []byte
	for n := 0; init == nil; n++ {
		line, err := br.ReadBytes('\n')
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(line, &m) == nil && m.Method == "initialize" {
			init = line
		} else {
			held = append(held, line...)
		}
		if init == nil && (err != nil || n == maxHeldLines) {
			// stdin closed (or too much before initialize): serve what came.
			return io.MultiReader(bytes.NewReader(held), br), stdout, nil
		}
	}
	if order == SlowStartInitializeFirst {
		// What came before initialize, and anything after it, is read
		// once stdin closed: the client has given up by then.
		closed := make(chan struct{})
		var rest bytes.Buffer
		go func() {
			_, _ = io.Copy(&rest, io.LimitReader(br, 1<<20))
			close(closed)
		}()
		return io.MultiReader(bytes.NewReader(init), &gatedReader{gate: closed, r: io.MultiReader(bytes.NewReader(held), &rest)}), stdout, nil
	}
	w := &signalWriter{w: stdout, wrote: make(chan struct{})}
	return io.MultiReader(bytes.NewReader(held), &gatedReader{gate: w.wrote, r: io.MultiReader(bytes.NewReader(init), br)}), w, nil
}

// signalWriter closes wrote after its first write.
type signalWriter struct {
	w     io.Writer
	once  sync.Once
	wrote chan struct{}
}

func (s *signalWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.once.Do(func() { close(s.wrote) })
	return n, err
}

// gatedReader reads r once gate is closed.
type gatedReader struct {
	gate <-chan struct{}
	r    io.Reader
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.gate
	return g.r.Read(p)
}
