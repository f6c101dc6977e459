package cmd

import (
	"errors"
	"fmt"
)

// Exit codes, the contract with CI jobs (documented in the root --help).
const (
	ExitOK     = 0 // clean: plan safe, copy complete, stores agree
	ExitError  = 1 // an error: bad input, unreachable store, failed write
	ExitUnsafe = 2 // the run worked but found a problem: plan blocked/unsafe, verify drift
)

// exitError carries an exit code through cobra. When silent, the command has already told the
// operator what went wrong (a blocked plan printed as a table) and nothing more is printed.
type exitError struct {
	code   int
	err    error
	silent bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// unsafe reports a completed run that found something the operator must look at (exit 2).
func unsafe(format string, args ...any) error {
	return &exitError{code: ExitUnsafe, err: fmt.Errorf(format, args...)}
}

// exitCode maps an error returned by a command to the process exit code, in one place.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitError
}
