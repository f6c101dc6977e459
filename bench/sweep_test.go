package bench_test

import (
	"strconv"
	"testing"
)

// The sweep times every setting over sweepSample Gets: a small tree is cycled through in order,
// a large one cut.
func TestSweepPaths(t *testing.T) {
	for _, n := range []int{0, 1, 3, 10000, sweepSample - 1, sweepSample, sweepSample + 7} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			paths := make([]string, n)
			for i := range paths {
				paths[i] = "/p/" + strconv.Itoa(i)
			}
			got := sweepPaths(paths)
			if n == 0 {
				if len(got) != 0 {
					t.Fatalf("%d paths from none", len(got))
				}
				return
			}
			if len(got) != sweepSample {
				t.Fatalf("%d paths, want %d", len(got), sweepSample)
			}
			for i, p := range got {
				if p != paths[i%n] {
					t.Fatalf("path %d is %s, want %s", i, p, paths[i%n])
				}
			}
		})
	}
}
