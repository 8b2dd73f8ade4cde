package roomsfile

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrNotApplied is returned by Apply when one or more steps were not
// carried out; each is reported in the output.
var ErrNotApplied = errors.New("not every step was applied")

// Apply carries out a plan's steps in order, each over the version of the
// room the plan read: a room changed on the node since (from the console,
// the API, another apply) is a conflict, reported and left as it is. The
// other steps go on. out gets one line per step; secrets (a new room's
// token-signing secret) go to secrets only, as "<slug> <secret>" lines,
// and are dropped when it is nil.
func Apply(ctx context.Context, c *Client, p Plan, out, secrets io.Writer) error {
	failed := 0
	for _, s := range p.Steps {
		msg, err := applyStep(ctx, c, s, secrets)
		switch {
		case err == nil && msg != "":
			fmt.Fprintln(out, msg)
		case IsConflict(err):
			failed++
			fmt.Fprintf(out, "conflict: room %q changed on the node since the plan read it; not written (run plan again): %v\n", s.Slug, err)
		case err != nil:
			failed++
			fmt.Fprintf(out, "failed: room %q: %v\n", s.Slug, err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of the plan's steps failed", ErrNotApplied, failed)
	}
	return nil
}

func applyStep(ctx context.Context, c *Client, s Step, secrets io.Writer) (string, error) {
	switch s.Action {
	case Create:
		site, secret, err := c.Create(ctx, *s.Config)
		if err != nil {
			return "", err
		}
		if secrets != nil {
			if _, err := fmt.Fprintf(secrets, "%s %s\n", s.Slug, secret); err != nil {
				return "", fmt.Errorf("created as %s, but its secret could not be written: %w", site.ID, err)
			}
		}
		return fmt.Sprintf("created room %q (%s)", s.Slug, site.ID), nil
	case Change:
		if _, err := c.Update(ctx, s.ID, s.Version, *s.Config); err != nil {
			return "", err
		}
		return fmt.Sprintf("changed room %q (%s): %d fields", s.Slug, s.ID, len(s.Fields)), nil
	case Delete:
		return deleteStep(ctx, c, s)
	case Adjust:
		if err := c.Adjust(ctx, s.ID, s.Version, *s.Capacity, s.Reset); err != nil {
			return "", err
		}
		return fmt.Sprintf("adjusted capacity room %s (%s): %d fields", s.Slug, s.ID, len(s.Fields)), nil
	}
	return "", nil
}

// deleteStep deletes a room only as the plan read it. The delete call
// carries no version, so the room is read again just before: the window
// left is that of one round trip.
func deleteStep(ctx context.Context, c *Client, s Step) (string, error) {
	cur, err := c.Site(ctx, s.ID)
	if IsNotFound(err) {
		return fmt.Sprintf("room %q (%s) was already deleted", s.Slug, s.ID), nil
	}
	if err != nil {
		return "", err
	}
	if cur.Version != s.Version {
		return "", &APIError{Method: "DELETE", Path: SitePath(s.ID, ""), Status: 409, Code: "conflict",
			Message: fmt.Sprintf("the room's version is %s, the plan read %s", cur.Version, s.Version)}
	}
	if err := c.Delete(ctx, s.ID); err != nil {
		return "", err
	}
	return fmt.Sprintf("deleted room %q (%s)", s.Slug, s.ID), nil
}
