package mm2log

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/zk2kafka/zk2kafka/migrate/mm2"
)

// Records reads MirrorMaker 2's records for one run: the offset syncs, from the cluster that
// holds them, and the checkpoints, from the target. The first Next reads them whole; each later
// one reads only what was written since, and keeps what it read before (Update).
type Records struct {
	Syncs      *Reader
	SyncsTopic string
	// Checkpoints reads the target's checkpoints topic, CheckpointsTopic; nil when its name is
	// not known (the identity policy without a source alias).
	Checkpoints      *Reader
	CheckpointsTopic string
	Policy           mm2.Policy
	// LagMax is MirrorMaker 2's offset.lag.max (0: DefaultOffsetLagMax).
	LagMax int64
	Logger *slog.Logger

	// log and cps are what was read so far; an End still nil means a topic not read yet, which
	// Update and ReadCheckpoints then read whole.
	log       Log
	cps       Checkpoints
	noCPsSaid bool
}

// readCheckpoints reads the checkpoints since cps, or none without a reader.
func (r *Records) readCheckpoints(ctx context.Context, cps Checkpoints) (Checkpoints, error) {
	if r.Checkpoints == nil {
		return cps, nil
	}
	return r.Checkpoints.ReadCheckpoints(ctx, cps)
}

// Next reads what was written since the last call and returns the translator over all of it.
// Without a checkpoints topic on the target (MirrorMaker 2 runs without
// emit.checkpoints.enabled) it translates from the offset syncs alone, and says so once.
func (r *Records) Next(ctx context.Context) (*Translator, error) {
	logger := r.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r.log.Topic, r.cps.Topic = r.SyncsTopic, r.CheckpointsTopic
	log, err := r.Syncs.Update(ctx, r.log)
	if err != nil {
		return nil, err
	}
	cps := r.cps
	switch got, err := r.readCheckpoints(ctx, cps); {
	case errors.Is(err, ErrNoTopic), r.Checkpoints == nil:
		if !r.noCPsSaid {
			logger.Info("no MirrorMaker 2 checkpoints read from the target (its topic is not there, or no source alias names it): offsets are translated from the offset syncs alone", "topic", r.CheckpointsTopic)
			r.noCPsSaid = true
		}
	case err != nil:
		return nil, fmt.Errorf("MirrorMaker 2's checkpoints: %w", err)
	default:
		cps = got
	}
	tr, err := NewTranslator(log, r.Policy, r.LagMax)
	if err != nil {
		return nil, err
	}
	r.log, r.cps = log, cps
	return tr.WithCheckpoints(cps), nil
}
