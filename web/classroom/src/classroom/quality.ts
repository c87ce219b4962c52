// Connection quality from RTCPeerConnection statistics: round-trip time of
// the selected candidate pairs and packet loss (inbound: lost over expected
// since the last sample; outbound: the receiver's fractionLost).

export interface QualitySample {
  rtt: number; // milliseconds
  loss: number; // 0-1
}

type Counters = { lost: number; received: number };

export class QualityMeter {
  private last = new Map<string, Counters>();

  /** Samples every pc; null when none gave a round-trip time. */
  async sample(pcs: Iterable<{ stream: string; pc: RTCPeerConnection }>): Promise<QualitySample | null> {
    const rtts: number[] = [];
    let lostDelta = 0;
    let receivedDelta = 0;
    const fractions: number[] = [];
    const seen = new Set<string>();
    for (const { stream, pc } of pcs) {
      if (pc.connectionState === 'closed') continue;
      let stats: RTCStatsReport;
      try {
        stats = await pc.getStats();
      } catch {
        continue;
      }
      let pairRtt: number | undefined;
      stats.forEach((r) => {
        if (r.type === 'transport' && r.selectedCandidatePairId) {
          const pair = stats.get(r.selectedCandidatePairId);
          if (pair && typeof pair.currentRoundTripTime === 'number') pairRtt = pair.currentRoundTripTime * 1000;
        }
      });
      if (pairRtt === undefined) {
        stats.forEach((r) => {
          if (
            pairRtt === undefined &&
            r.type === 'candidate-pair' &&
            r.nominated &&
            r.state === 'succeeded' &&
            typeof r.currentRoundTripTime === 'number'
          ) {
            pairRtt = r.currentRoundTripTime * 1000;
          }
        });
      }
      if (pairRtt !== undefined) rtts.push(pairRtt);
      stats.forEach((r) => {
        if (r.type === 'inbound-rtp' && typeof r.packetsReceived === 'number') {
          const key = `${stream}/${r.id}`;
          seen.add(key);
          const now = { lost: Math.max(0, r.packetsLost ?? 0), received: r.packetsReceived };
          const prev = this.last.get(key) ?? { lost: 0, received: 0 };
          lostDelta += Math.max(0, now.lost - prev.lost);
          receivedDelta += Math.max(0, now.received - prev.received);
          this.last.set(key, now);
        } else if (r.type === 'remote-inbound-rtp') {
          if (typeof r.fractionLost === 'number') fractions.push(r.fractionLost);
          if (pairRtt === undefined && typeof r.roundTripTime === 'number') rtts.push(r.roundTripTime * 1000);
        }
      });
    }
    for (const key of [...this.last.keys()]) if (!seen.has(key)) this.last.delete(key);
    if (rtts.length === 0) return null;
    const rtt = rtts.reduce((a, b) => a + b, 0) / rtts.length;
    const inbound = lostDelta + receivedDelta > 0 ? lostDelta / (lostDelta + receivedDelta) : 0;
    const outbound = fractions.length ? Math.max(...fractions) : 0;
    return { rtt: Math.round(rtt), loss: clamp01(Math.max(inbound, outbound)) };
  }
}

function clamp01(x: number): number {
  return Math.round(Math.min(1, Math.max(0, x)) * 1000) / 1000;
}
