// The checks behind the pre-class check page: camera, microphone, and a
// WebRTC data channel to the server, directly and through the relay (TURN).

export interface CheckBoot {
  ice: string;
  offer: string;
}

export type Outcome = { ok: true; rtt: number } | { ok: false; reason: string };

async function postJSON<T>(url: string, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (!res.ok) throw new CheckError('server');
  return (await res.json()) as T;
}

export class CheckError extends Error {
  constructor(public reason: string) {
    super(reason);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, reason: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const id = window.setTimeout(() => reject(new CheckError(reason)), ms);
    p.then(
      (v) => {
        window.clearTimeout(id);
        resolve(v);
      },
      (e) => {
        window.clearTimeout(id);
        reject(e);
      },
    );
  });
}

function gathered(pc: RTCPeerConnection): Promise<void> {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const f = () => {
      if (pc.iceGatheringState === 'complete') {
        pc.removeEventListener('icegatheringstatechange', f);
        resolve();
      }
    };
    pc.addEventListener('icegatheringstatechange', f);
  });
}

function opened(dc: RTCDataChannel, pc: RTCPeerConnection): Promise<void> {
  if (dc.readyState === 'open') return Promise.resolve();
  return new Promise((resolve, reject) => {
    dc.addEventListener('open', () => resolve(), { once: true });
    dc.addEventListener('close', () => reject(new CheckError('connect')), { once: true });
    pc.addEventListener('connectionstatechange', () => {
      if (pc.connectionState === 'failed') reject(new CheckError('connect'));
    });
  });
}

function hasTurn(servers: RTCIceServer[]): boolean {
  return servers.some((s) => {
    const urls = Array.isArray(s.urls) ? s.urls : [s.urls];
    return urls.some((u) => /^turns?:/i.test(u));
  });
}

/** One round of the connectivity check; relay=true forces the TURN relay. */
export async function connectivity(boot: CheckBoot, relay: boolean): Promise<Outcome> {
  let pc: RTCPeerConnection | undefined;
  try {
    const { iceServers = [] } = await postJSON<{ iceServers?: RTCIceServer[] }>(boot.ice, {});
    if (relay && !hasTurn(iceServers)) throw new CheckError('no-relay');
    pc = new RTCPeerConnection({ iceServers, iceTransportPolicy: relay ? 'relay' : 'all' });
    const dc = pc.createDataChannel('check');
    await pc.setLocalDescription(await pc.createOffer());
    // Gathering can hang on unreachable servers; what was found by then is used.
    await withTimeout(gathered(pc), 10_000, 'gather').catch(() => {});
    const sdp = pc.localDescription?.sdp ?? '';
    if (!/a=candidate:/.test(sdp)) throw new CheckError(relay ? 'relay-unreachable' : 'no-candidates');
    const answer = await postJSON<{ sdp?: string }>(boot.offer, { sdp, relay });
    if (!answer.sdp) throw new CheckError('server');
    await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    await withTimeout(opened(dc, pc), 15_000, 'connect');
    const rtts: number[] = [];
    for (let i = 0; i < 3; i++) rtts.push(await echo(dc, `check-${i}-${Date.now()}`));
    rtts.sort((a, b) => a - b);
    return { ok: true, rtt: Math.round(rtts[1]) };
  } catch (e) {
    return { ok: false, reason: e instanceof CheckError ? e.reason : 'connect' };
  } finally {
    pc?.close();
  }
}

function echo(dc: RTCDataChannel, text: string): Promise<number> {
  const start = performance.now();
  return withTimeout(
    new Promise<number>((resolve) => {
      const f = (ev: MessageEvent) => {
        if (String(ev.data) === text) {
          dc.removeEventListener('message', f);
          resolve(performance.now() - start);
        }
      };
      dc.addEventListener('message', f);
      dc.send(text);
    }),
    5000,
    'echo',
  );
}

/** Maps a getUserMedia failure to a reason key. */
export function deviceReason(e: unknown): string {
  const name = e instanceof DOMException ? e.name : '';
  switch (name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return 'denied';
    case 'NotFoundError':
    case 'OverconstrainedError':
      return 'missing';
    case 'NotReadableError':
      return 'busy';
    default:
      return navigator.mediaDevices ? 'failed' : 'unsupported';
  }
}
