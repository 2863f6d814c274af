package bench

import (
	"context"
	"fmt"
	"io"

	"github.com/lockbench/lockbench/preflight"
	"github.com/lockbench/lockbench/target"
)

// Preflight is lockbench check of tgt, without a run: whether the user may use the keys of
// prefix (KeyAccess: its error wraps ErrBadSpec and ErrKeysRefused), then, on w, the deployment
// as a run of concurrency workers per driver would record it (preflight.Write), the key warnings
// among its own. complete says every data node answered; an error of w is returned as it is.
func Preflight(ctx context.Context, tgt *target.Target, prefix string, concurrency int, w io.Writer) (complete bool, err error) {
	warn, err := KeyAccess(ctx, tgt, prefix)
	if err != nil {
		return false, err
	}
	d := tgt.Deployment(ctx, concurrency)
	d.Warnings = append(d.Warnings, warn...)
	fmt.Fprintf(w, "%s deployment at %s, %d data nodes\n", tgt.Spec(), tgt.Conn(), len(d.Nodes))
	if err := preflight.Write(w, d); err != nil {
		return false, err
	}
	return len(d.Nodes) >= len(tgt.Nodes()), nil
}
