package kafkawriter

import (
	"context"
	"strings"
)

func containsStr(s, sub string) bool { return strings.Contains(s, sub) }

func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}
