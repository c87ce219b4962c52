package lmsapi

import (
	"context"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/blob"
)

// probeDuration is the length in whole seconds (rounded up) of an
// uploaded audio or video file, read with ffprobe when it is installed and
// the blobs are in a local folder or an object store; 0 when unknown.
func probeDuration(ctx context.Context, blobs blob.Store, key, ctype string) int {
	if !strings.HasPrefix(ctype, "video/") && !strings.HasPrefix(ctype, "audio/") {
		return 0
	}
	var src string
	switch b := blobs.(type) {
	case blob.Dir:
		p, err := b.Path(key)
		if err != nil {
			return 0
		}
		src = p
	case interface {
		PresignGet(key string, expiry time.Duration) (string, error)
	}:
		// An object store: ffprobe reads the few ranges it needs over HTTP.
		u, err := b.PresignGet(key, time.Minute)
		if err != nil {
			return 0
		}
		src = u
	default:
		return 0
	}
	bin, err := exec.LookPath("ffprobe")
	if err != nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-v", "error", "-show_entries", "format=duration",
		"-of", "default=noprint_wrappers=1:nokey=1", src).Output()
	if err != nil {
		return 0
	}
	s, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || s <= 0 || s > 1e7 {
		return 0
	}
	return int(math.Ceil(s))
}
