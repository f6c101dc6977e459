// Package durable holds what makes a written file survive a crash, for the files zk2kafka
// writes (plan files, backups): it reads and writes nothing of its own.
package durable

import (
	"errors"
	"os"
)

// SyncDir flushes the directory dir, so that a file created or renamed in it is still there
// after a crash: syncing the file itself does not record its name.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
