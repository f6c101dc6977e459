package datadir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// dataFile is one snapshot or log file of a data directory, named for a zxid in hex: the first
// zxid of a log, the zxid a snapshot started at.
type dataFile struct {
	path string
	zxid int64
}

// files are the snapshots (newest first) and logs (oldest first) to read.
type files struct {
	dir   string
	snaps []dataFile
	logs  []dataFile
	// single is set when the path named one snapshot: it alone is loaded, never an older one.
	single bool
}

// locate finds the files of PATH: ZooKeeper's version-2 folder, the dataDir that holds it, or
// one snapshot file (then the logs beside it are replayed over it, if there are any).
func locate(path string) (files, error) {
	st, err := os.Stat(path)
	if err != nil {
		return files{}, fmt.Errorf("--zk-data-dir: %w", err)
	}
	if !st.IsDir() {
		z, ok := fileZxid(filepath.Base(path), "snapshot.")
		if !ok {
			return files{}, fmt.Errorf("--zk-data-dir %s: not a snapshot file (expected snapshot.<hex zxid>, .gz or .snappy) nor a directory", path)
		}
		fs, err := scan(filepath.Dir(path))
		if err != nil {
			return files{}, err
		}
		fs.snaps, fs.single = []dataFile{{path, z}}, true
		return fs, nil
	}
	if v2 := filepath.Join(path, "version-2"); isDir(v2) {
		path = v2
	}
	fs, err := scan(path)
	if err != nil {
		return files{}, err
	}
	if len(fs.snaps) == 0 {
		what := "no snapshot file"
		if len(fs.logs) > 0 {
			what = fmt.Sprintf("%d transaction logs but no snapshot file", len(fs.logs))
		}
		return files{}, fmt.Errorf("--zk-data-dir %s: %s (snapshot.<hex zxid>): give ZooKeeper's dataDir, its version-2 folder or one snapshot", path, what)
	}
	return fs, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// scan lists the snapshot and log files of one folder.
func scan(dir string) (files, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return files{}, fmt.Errorf("--zk-data-dir: %w", err)
	}
	fs := files{dir: dir}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if z, ok := fileZxid(e.Name(), "snapshot."); ok {
			fs.snaps = append(fs.snaps, dataFile{filepath.Join(dir, e.Name()), z})
		} else if z, ok := fileZxid(e.Name(), "log."); ok {
			fs.logs = append(fs.logs, dataFile{filepath.Join(dir, e.Name()), z})
		}
	}
	slices.SortFunc(fs.snaps, func(a, b dataFile) int { return compareZxid(b.zxid, a.zxid) })
	slices.SortFunc(fs.logs, func(a, b dataFile) int { return compareZxid(a.zxid, b.zxid) })
	return fs, nil
}

func compareZxid(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fileZxid parses the zxid of "snapshot.1a2b", "snapshot.1a2b.gz", "snapshot.1a2b.snappy" or
// "log.1a2b" (Util.getZxidFromName); anything else is not a data file.
func fileZxid(name, prefix string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	if prefix == "snapshot." {
		rest = strings.TrimSuffix(strings.TrimSuffix(rest, ".gz"), ".snappy")
	}
	z, err := strconv.ParseUint(rest, 16, 64)
	if err != nil || rest == "" {
		return 0, false
	}
	return int64(z), true
}

// logsFrom are the logs a replay from a snapshot at zxid needs (FileTxnLog.getLogFiles): the
// last log that starts at or before zxid, and every later one.
func (fs files) logsFrom(zxid int64) []dataFile {
	start := 0
	for i, l := range fs.logs {
		if l.zxid > zxid {
			break
		}
		start = i
	}
	return fs.logs[start:]
}
