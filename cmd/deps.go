package cmd

import "io"

// storeOpener opens the adapters; command tests replace it with fakes.
type storeOpener interface{}

func defaultDeps(stdout, stderr io.Writer) *deps {
	return &deps{stdout: stdout, stderr: stderr}
}
