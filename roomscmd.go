package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aditus-queue/aditus-queue/transport/roomsfile"
)

const roomsUsage = `usage: aditus-queue rooms plan  -f rooms.hcl [-destroy] [-out plan.json] [--url URL]
       aditus-queue rooms apply -f rooms.hcl [-destroy] [--secrets-file F] [--url URL]
       aditus-queue rooms apply -plan plan.json [--secrets-file F] [--url URL]
The admin token comes from AQ_ADMIN_TOKEN or --admin-token-file, never from the command line.
plan exits 0 with no change, 2 with changes, 1 on an error; apply 0 when done, 1 on an error.`

// roomsFlags are the flags of `rooms plan` and `rooms apply`.
type roomsFlags struct {
	file, planFile, out, url, tokenFile, secretsFile string
	destroy, allowHTTP                               bool
}

func parseRoomsFlags(cmd string, args []string) (roomsFlags, error) {
	var f roomsFlags
	for _, a := range args {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "admin-token" {
			return f, errors.New("the admin token is not taken on the command line (it would be in the shell's history and the process list): set AQ_ADMIN_TOKEN or use --admin-token-file")
		}
	}
	fs := flag.NewFlagSet("rooms "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.file, "f", "", "the rooms file (HCL)")
	fs.StringVar(&f.url, "url", envOr("AQ_URL", "http://localhost:8080"), "the node's base URL (env AQ_URL)")
	fs.StringVar(&f.tokenFile, "admin-token-file", "", "a file holding the admin token (else AQ_ADMIN_TOKEN)")
	fs.BoolVar(&f.destroy, "destroy", false, "delete the node's rooms the file does not name")
	fs.BoolVar(&f.allowHTTP, "allow-http", false, "allow plain http to a host other than loopback")
	if cmd == "plan" {
		fs.StringVar(&f.out, "out", "", "save the plan for `rooms apply -plan`")
	} else {
		fs.StringVar(&f.planFile, "plan", "", "apply a plan saved by `rooms plan -out`")
		fs.StringVar(&f.secretsFile, "secrets-file", "", "append each new room's token-signing secret to this file (mode 0600)")
	}
	if err := fs.Parse(args); err != nil {
		return f, fmt.Errorf("%w\n%s", err, roomsUsage)
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q\n%s", fs.Arg(0), roomsUsage)
	}
	if f.planFile != "" && f.destroy {
		return f, errors.New("-destroy goes with plan: a saved plan already says what it deletes")
	}
	if (f.file == "") == (f.planFile == "") {
		return f, fmt.Errorf("name the rooms file with -f (or, for apply, a saved plan with -plan)\n%s", roomsUsage)
	}
	return f, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// runRooms is `aditus-queue rooms plan|apply`; it returns the exit code.
func runRooms(ctx context.Context, args []string, out, errOut io.Writer) int {
	if len(args) == 0 || (args[0] != "plan" && args[0] != "apply") {
		fmt.Fprintln(errOut, roomsUsage)
		return 1
	}
	cmd := args[0]
	code, err := roomsCommand(ctx, cmd, args[1:], out)
	if err != nil {
		fmt.Fprintf(errOut, "aditus-queue rooms %s: %v\n", cmd, err)
	}
	return code
}

func roomsCommand(ctx context.Context, cmd string, args []string, out io.Writer) (int, error) {
	f, err := parseRoomsFlags(cmd, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(out, roomsUsage)
		return 0, nil
	}
	if err != nil {
		return 1, err
	}
	plan, c, err := roomsPlan(ctx, f)
	if err != nil {
		return 1, err
	}
	plan.Write(out)
	if cmd == "plan" {
		if f.out != "" {
			if err := savePlan(f.out, plan); err != nil {
				return 1, err
			}
		}
		if plan.Changes() {
			return 2, nil
		}
		return 0, nil
	}
	if !plan.Changes() {
		return 0, nil
	}
	return applyPlan(ctx, c, plan, f.secretsFile, out)
}

// roomsPlan reads the file (checked whole before any request) or the saved
// plan, and the node's rooms.
func roomsPlan(ctx context.Context, f roomsFlags) (roomsfile.Plan, *roomsfile.Client, error) {
	var file roomsfile.File
	var saved *roomsfile.Plan
	var err error
	if f.file != "" {
		file, err = roomsfile.LoadFile(f.file)
	} else {
		saved, err = loadPlan(f.planFile)
	}
	if err != nil {
		return roomsfile.Plan{}, nil, err
	}
	token, err := roomsAdminToken(f.tokenFile)
	if err != nil {
		return roomsfile.Plan{}, nil, err
	}
	c, err := roomsfile.NewClient(f.url, token, f.allowHTTP)
	if err != nil {
		return roomsfile.Plan{}, nil, err
	}
	if saved != nil {
		return *saved, c, nil
	}
	plan, err := diffNode(ctx, c, file, f.destroy)
	return plan, c, err
}

// diffNode reads the node's rooms (its capacity rooms only when the file
// names some) and compares them with the file.
func diffNode(ctx context.Context, c *roomsfile.Client, file roomsfile.File, destroy bool) (roomsfile.Plan, error) {
	have, err := c.Sites(ctx)
	if err != nil {
		return roomsfile.Plan{}, err
	}
	plan := roomsfile.Diff(file.Rooms, have, destroy)
	if len(file.Capacity) == 0 {
		return plan, nil
	}
	capacity, err := c.CapacityRooms(ctx)
	if err != nil {
		return roomsfile.Plan{}, err
	}
	steps, err := roomsfile.DiffCapacity(file.Capacity, capacity)
	if err != nil {
		return roomsfile.Plan{}, err
	}
	plan.Steps = append(plan.Steps, steps...)
	return plan, nil
}

func applyPlan(ctx context.Context, c *roomsfile.Client, plan roomsfile.Plan, secretsFile string, out io.Writer) (int, error) {
	var secrets io.Writer
	if secretsFile != "" {
		sf, err := os.OpenFile(secretsFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return 1, err
		}
		defer sf.Close()
		secrets = sf
	} else if plan.Count(roomsfile.Create) > 0 {
		fmt.Fprintln(out, "note: new rooms' token-signing secrets are not kept (--secrets-file keeps them); rotate one in the console when a shop needs it")
	}
	if err := roomsfile.Apply(ctx, c, plan, out, secrets); err != nil {
		return 1, err
	}
	return 0, nil
}

// roomsAdminToken reads the token from the file named, else AQ_ADMIN_TOKEN.
func roomsAdminToken(file string) (string, error) {
	if file == "" {
		return os.Getenv("AQ_ADMIN_TOKEN"), nil
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--admin-token-file: %w", err)
	}
	return strings.TrimSpace(string(raw)), nil
}

func savePlan(path string, p roomsfile.Plan) error {
	raw, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o600)
}

func loadPlan(path string) (*roomsfile.Plan, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p roomsfile.Plan
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: not a saved plan: %w", path, err)
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}
