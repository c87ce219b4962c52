// Package domainfile writes and reads a domain export: JSON lines that
// move one domain (a school) from one Lectern server to another.
//
// The first line is a header ({"format":"lectern-domain","version":1,...}),
// then one line per row ({"table":"users","row":{...}}), the domain's own
// row first and every table after the tables it references; then the
// blobs the rows name, in chunks ({"blob":"recordings/ab12...","data":
// base64}); the last line ({"end":true,"rows":N,"blobs":M}) tells a
// complete file from a truncated one.
package domainfile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
	"github.com/lectern-lms/lectern/internal/store"
)

// Format and Version name the file format in its header.
const (
	Format  = "lectern-domain"
	Version = 1
)

// chunk is the size of a blob line's data before base64.
const chunk = 512 << 10

// Header is the first line.
type Header struct {
	Format         string    `json:"format"`
	Version        int       `json:"version"`
	SchemaVersion  int64     `json:"schema_version"`
	DomainID       int64     `json:"domain_id"`
	ExportedAt     time.Time `json:"exported_at"`
	LecternVersion string    `json:"lectern_version,omitempty"`
}

// line is any line after the header.
type line struct {
	Table string         `json:"table,omitempty"`
	Row   map[string]any `json:"row,omitempty"`
	Blob  string         `json:"blob,omitempty"`
	Data  []byte         `json:"data,omitempty"`
	End   bool           `json:"end,omitempty"`
	Rows  int            `json:"rows,omitempty"`
	Blobs int            `json:"blobs,omitempty"`
}

// Summary counts what a file holds.
type Summary struct {
	Header Header
	Rows   int
	Blobs  int
	Tables map[string]int
}

// Export writes domain domainID of st, with the blobs its rows name (read
// from blobs), to w.
func Export(ctx context.Context, st *store.Store, blobs blob.Store, domainID int64, lecternVersion string, w io.Writer) (Summary, error) {
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Header: Header{Format: Format, Version: Version, SchemaVersion: v, DomainID: domainID,
		ExportedAt: time.Now().UTC().Truncate(time.Second), LecternVersion: lecternVersion}, Tables: map[string]int{}}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(s.Header); err != nil {
		return s, err
	}
	var keys []string
	seen := map[string]bool{}
	err = st.ExportDomain(ctx, domainID, func(r store.DumpRow) error {
		s.Rows++
		s.Tables[r.Table]++
		if k, ok := r.Row["blob_key"].(string); ok && k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		return enc.Encode(line{Table: r.Table, Row: r.Row})
	})
	if err != nil {
		return s, err
	}
	buf := make([]byte, chunk)
	for _, k := range keys {
		f, err := blobs.Open(k)
		if errors.Is(err, blob.ErrNotFound) {
			continue // a row whose file is gone (deleted meanwhile)
		}
		if err != nil {
			return s, fmt.Errorf("blob %s: %w", k, err)
		}
		s.Blobs++
		first := true
		for {
			n, rerr := io.ReadFull(f, buf)
			if n > 0 || first {
				if err := enc.Encode(line{Blob: k, Data: buf[:n]}); err != nil {
					f.Close()
					return s, err
				}
				first = false
			}
			if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
				break
			}
			if rerr != nil {
				f.Close()
				return s, fmt.Errorf("blob %s: %w", k, rerr)
			}
		}
		f.Close()
	}
	if err := enc.Encode(line{End: true, Rows: s.Rows, Blobs: s.Blobs}); err != nil {
		return s, err
	}
	return s, bw.Flush()
}

// maxLine bounds one line (a row, or a blob chunk in base64).
const maxLine = 64 << 20

// scan calls fn for every line after the header of the file in r, and
// checks the file's shape: the header, then rows, then blobs, then the end
// line with the right counts.
func scan(r io.Reader, fn func(l line) error) (Summary, error) {
	s := Summary{Tables: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	if !sc.Scan() {
		return s, errors.New("empty file")
	}
	if err := json.Unmarshal(sc.Bytes(), &s.Header); err != nil || s.Header.Format != Format {
		return s, errors.New("not a Lectern domain export (no header line)")
	}
	if s.Header.Version != Version {
		return s, fmt.Errorf("format version %d, this server reads %d", s.Header.Version, Version)
	}
	n, ended, lastBlob := 1, false, ""
	for sc.Scan() {
		n++
		if ended {
			return s, fmt.Errorf("line %d: after the end line", n)
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&l); err != nil {
			return s, fmt.Errorf("line %d: %v", n, err)
		}
		switch {
		case l.End:
			if l.Rows != s.Rows || l.Blobs != s.Blobs {
				return s, fmt.Errorf("line %d: the end line counts %d rows and %d blobs, the file holds %d and %d", n, l.Rows, l.Blobs, s.Rows, s.Blobs)
			}
			ended = true
			continue
		case l.Blob != "":
			if l.Blob != lastBlob {
				s.Blobs++
				lastBlob = l.Blob
			}
		case l.Table != "":
			if s.Blobs > 0 {
				return s, fmt.Errorf("line %d: a row after the blobs", n)
			}
			if s.Rows == 0 && l.Table != "domains" {
				return s, fmt.Errorf("line %d: the first row must be the domain's", n)
			}
			s.Rows++
			s.Tables[l.Table]++
		default:
			return s, fmt.Errorf("line %d: neither a row, a blob nor the end", n)
		}
		if err := fn(l); err != nil {
			return s, err
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	if !ended {
		return s, errors.New("no end line: the file is truncated")
	}
	return s, nil
}

// Check reads a whole file and reports what it holds, or why it is not a
// complete domain export.
func Check(r io.Reader) (Summary, error) {
	return scan(r, func(line) error { return nil })
}

// Import reads a domain export into st and blobs as a new domain. The file
// is read three times (it must be seekable): checked whole first, then
// its blobs are written (under their own keys, which are random names),
// then its rows are inserted in one transaction. Nothing is written when
// the check fails; blobs without rows are all a failed row import leaves.
func Import(ctx context.Context, st *store.Store, blobs blob.Store, f io.ReadSeeker) (store.ImportResult, Summary, error) {
	s, err := Check(f)
	if err != nil {
		return store.ImportResult{}, s, fmt.Errorf("not imported: %w", err)
	}
	cur, err := st.SchemaVersion(ctx)
	if err != nil {
		return store.ImportResult{}, s, err
	}
	if s.Header.SchemaVersion > cur {
		return store.ImportResult{}, s, fmt.Errorf("not imported: the export is of schema version %d, this server's is %d: upgrade this server first", s.Header.SchemaVersion, cur)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return store.ImportResult{}, s, err
	}
	// Blobs, each through a pipe into PutAt.
	var (
		pw   *io.PipeWriter
		done chan error
	)
	finish := func() error {
		if pw == nil {
			return nil
		}
		pw.Close()
		err := <-done
		pw = nil
		return err
	}
	var current string
	_, err = scan(f, func(l line) error {
		if l.Blob == "" {
			return nil
		}
		if l.Blob != current {
			if err := finish(); err != nil {
				return err
			}
			current = l.Blob
			var pr *io.PipeReader
			pr, pw = io.Pipe()
			done = make(chan error, 1)
			go func(key string) {
				_, err := blobs.PutAt(key, pr)
				pr.CloseWithError(err)
				done <- err
			}(l.Blob)
		}
		_, err := pw.Write(l.Data)
		return err
	})
	if ferr := finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return store.ImportResult{}, s, fmt.Errorf("write blobs: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return store.ImportResult{}, s, err
	}
	var rows []store.DumpRow
	if _, err := scan(f, func(l line) error {
		if l.Table != "" {
			rows = append(rows, store.DumpRow{Table: l.Table, Row: l.Row})
		}
		return nil
	}); err != nil {
		return store.ImportResult{}, s, err
	}
	res, err := st.ImportDomain(ctx, rows)
	return res, s, err
}
