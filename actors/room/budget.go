package room

// AddressBudget limits how many new numbers (or places) one client address
// may take: a token bucket per address (an IPv4 address, an IPv6 /64),
// kept by the front node that answers the join. It is on in every room;
// an operator widens it for offices and carrier NAT, where many visitors
// share one address, and never turns it off.
type AddressBudget struct {
	// PerMinute is how many new numbers an address regains per minute
	// (1–6,000,000, default 30: the top is 100,000 a second, above what
	// a node issues, for a load generator or a site behind one address).
	PerMinute float64 `json:"perMinute"`
	// Burst is how many an address may take at once before the rate
	// applies (1–10,000,000, default 60): a class or an office arriving
	// together at the opening.
	Burst int `json:"burst"`
}

// Defaults and bounds of the address budget.
const (
	DefaultBudgetPerMinute = 30
	DefaultBudgetBurst     = 60
	MaxBudgetPerMinute     = 6_000_000
	MaxBudgetBurst         = 10_000_000
)

func (b *AddressBudget) normalize() {
	if b.PerMinute == 0 {
		b.PerMinute = DefaultBudgetPerMinute
	}
	if b.Burst == 0 {
		b.Burst = DefaultBudgetBurst
	}
}

func (b *AddressBudget) validate() error {
	if !(b.PerMinute >= 1 && b.PerMinute <= MaxBudgetPerMinute) {
		return invalid("addressBudget.perMinute", "must be 1–6000000 new numbers a minute")
	}
	if b.Burst < 1 || b.Burst > MaxBudgetBurst {
		return invalid("addressBudget.burst", "must be 1–10000000")
	}
	return nil
}

// Effective returns the budget in force: the defaults stand in for fields
// a configuration written before budgets existed leaves at zero, so no
// room is ever without one.
func (b AddressBudget) Effective() AddressBudget {
	b.normalize()
	return b
}
