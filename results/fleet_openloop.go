package results

import "fmt"

// mergeOpenLoop sets m's pacing from the processes' runs (sorted): for an open loop, the
// target and achieved rates and the late and dropped attempts add up, as the processes ran
// shares of one schedule (lockbench run --procs gives each the rate over the processes), and
// the service-time histograms merge like the others. The merged run is saturated when any
// share was, or when the sum misses the summed target by more than SaturationTolerance.
func mergeOpenLoop(m *Run, parts []Run) error {
	m.Pacing, m.Arrival = parts[0].Pacing, parts[0].Arrival
	if parts[0].Pacing != PacingOpen {
		return nil
	}
	service, lag := newHistogram(), newHistogram()
	for i := range parts {
		p := &parts[i]
		m.TargetRate += p.TargetRate
		m.AchievedRate += p.AchievedRate
		m.Late += p.Late
		m.Dropped += p.Dropped
		m.Saturated = m.Saturated || p.Saturated
		if p.Histograms.StartLag != "" {
			h, err := decode(p.Histograms.StartLag)
			if err != nil {
				return fmt.Errorf("process %d: start-lag histogram: %w", p.Fleet.Processes[0].Index, err)
			}
			lag.Merge(h)
		}
		if p.Histograms.Service == "" {
			continue
		}
		h, err := decode(p.Histograms.Service)
		if err != nil {
			return fmt.Errorf("process %d: service-time histogram: %w", p.Fleet.Processes[0].Index, err)
		}
		service.Merge(h)
	}
	m.Saturated = m.Saturated || m.AchievedRate < m.TargetRate*(1-SaturationTolerance)
	if lag.TotalCount() > 0 {
		pc := percentiles(lag)
		m.StartLagUS = &pc
		var err error
		if m.Histograms.StartLag, err = encode(lag); err != nil {
			return fmt.Errorf("encode start-lag histogram: %w", err)
		}
	}
	if service.TotalCount() == 0 {
		return nil
	}
	pc := percentiles(service)
	m.ServiceLatencyUS = &pc
	var err error
	if m.Histograms.Service, err = encode(service); err != nil {
		return fmt.Errorf("encode service-time histogram: %w", err)
	}
	return nil
}
