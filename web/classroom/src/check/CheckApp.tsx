import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { t } from '../shared/i18n';
import { CamIcon, MicIcon, QualityBars } from '../shared/icons';
import { LanguagePicker } from '../shared/LanguagePicker';
import { type CheckBoot, connectivity, deviceReason } from './run';

type Result = 'running' | 'ok' | 'fail' | 'idle';

interface Line {
  result: Result;
  text: string;
}

const running: Line = { result: 'running', text: '' };

function ResultLine({ id, line }: { id: string; line: Line }) {
  const text = line.result === 'running' ? t('check.running') : line.text;
  return (
    <p id={id} class={`result result-${line.result}`} data-result={line.result === 'idle' ? 'running' : line.result}>
      <span class="result-mark" aria-hidden="true">
        {line.result === 'ok' ? '✓' : line.result === 'fail' ? '!' : ''}
      </span>
      <span class="result-text">
        <span class="sr-only">
          {line.result === 'ok' ? t('check.passed') : line.result === 'fail' ? t('check.failed') : ''}{' '}
        </span>
        {text}
      </span>
    </p>
  );
}

function Card(props: { title: string; icon: ComponentChildren; children: ComponentChildren; headingId: string }) {
  return (
    <section class="card" aria-labelledby={props.headingId}>
      <h2 id={props.headingId}>
        {props.icon}
        {props.title}
      </h2>
      {props.children}
    </section>
  );
}

export function CheckApp({ boot }: { boot: CheckBoot }) {
  const [camera, setCamera] = useState<Line>(running);
  const [mic, setMic] = useState<Line>(running);
  const [direct, setDirect] = useState<Line>(running);
  const [relay, setRelay] = useState<Line>(running);
  const [level, setLevel] = useState(0);
  const [round, setRound] = useState(0);
  const [busy, setBusy] = useState(true);
  const video = useRef<HTMLVideoElement>(null);

  useEffect(() => {
    let cancelled = false;
    const cleanups: Array<() => void> = [];
    setCamera(running);
    setMic(running);
    setDirect(running);
    setRelay(running);
    setBusy(true);

    const cam = (async () => {
      try {
        const media = await navigator.mediaDevices.getUserMedia({ video: true });
        cleanups.push(() => media.getTracks().forEach((tr) => tr.stop()));
        const el = video.current;
        if (!el || cancelled) return;
        el.srcObject = media;
        await el.play().catch(() => {});
        const start = Date.now();
        while (el.videoWidth === 0 && Date.now() - start < 8000 && !cancelled) {
          await new Promise((r) => setTimeout(r, 100));
        }
        if (cancelled) return;
        if (el.videoWidth === 0) setCamera({ result: 'fail', text: t('check.camera.noPicture') });
        else setCamera({ result: 'ok', text: t('check.camera.ok', { width: el.videoWidth, height: el.videoHeight }) });
      } catch (e) {
        if (!cancelled) setCamera({ result: 'fail', text: t(`check.device.${deviceReason(e)}`) });
      }
    })();

    const microphone = (async () => {
      try {
        const media = await navigator.mediaDevices.getUserMedia({ audio: true });
        cleanups.push(() => media.getTracks().forEach((tr) => tr.stop()));
        if (cancelled) return;
        const ctx = new AudioContext();
        cleanups.push(() => void ctx.close());
        const resume = () => void ctx.resume();
        document.addEventListener('pointerdown', resume);
        document.addEventListener('keydown', resume);
        cleanups.push(() => {
          document.removeEventListener('pointerdown', resume);
          document.removeEventListener('keydown', resume);
        });
        void ctx.resume();
        const analyser = ctx.createAnalyser();
        analyser.fftSize = 1024;
        ctx.createMediaStreamSource(media).connect(analyser);
        const buf = new Float32Array(analyser.fftSize);
        let frame = 0;
        let lastShown = 0;
        const tick = () => {
          analyser.getFloatTimeDomainData(buf);
          let sum = 0;
          for (const v of buf) sum += v * v;
          const rms = Math.sqrt(sum / buf.length);
          // about -60 dBFS .. 0 dBFS onto 0..100
          const db = 20 * Math.log10(Math.max(rms, 1e-6));
          const value = Math.round(Math.min(100, Math.max(0, ((db + 60) / 60) * 100)));
          const now = performance.now();
          if (now - lastShown > 100) {
            lastShown = now;
            setLevel(value);
          }
          frame = requestAnimationFrame(tick);
        };
        frame = requestAnimationFrame(tick);
        cleanups.push(() => cancelAnimationFrame(frame));
        const label = media.getAudioTracks()[0]?.label;
        setMic({ result: 'ok', text: label ? t('check.mic.okNamed', { name: label }) : t('check.mic.ok') });
      } catch (e) {
        if (!cancelled) setMic({ result: 'fail', text: t(`check.device.${deviceReason(e)}`) });
      }
    })();

    const network = (async () => {
      if (typeof RTCPeerConnection === 'undefined') {
        const line = { result: 'fail' as const, text: t('check.net.unsupported') };
        setDirect(line);
        setRelay(line);
        return;
      }
      const d = await connectivity(boot, false);
      if (cancelled) return;
      setDirect(
        d.ok
          ? { result: 'ok', text: t('check.direct.ok', { ms: d.rtt }) }
          : { result: 'fail', text: `${t('check.direct.fail')} ${reasonText(d.reason)}` },
      );
      const r = await connectivity(boot, true);
      if (cancelled) return;
      setRelay(
        r.ok
          ? { result: 'ok', text: t('check.relay.ok', { ms: r.rtt }) }
          : { result: 'fail', text: `${t('check.relay.fail')} ${reasonText(r.reason)}` },
      );
    })();

    void Promise.allSettled([cam, microphone, network]).then(() => {
      if (!cancelled) setBusy(false);
    });
    return () => {
      cancelled = true;
      cleanups.forEach((f) => f());
    };
  }, [round]);

  const done = !busy;
  const netOk = direct.result === 'ok' || relay.result === 'ok';
  const allOk = camera.result === 'ok' && mic.result === 'ok' && netOk;
  return (
    <main class="check">
      <header class="check-head">
        <div>
          <p class="brand">{t('app.name')}</p>
          <h1>{t('check.title')}</h1>
        </div>
        <LanguagePicker />
      </header>
      <p class="check-intro">{t('check.intro')}</p>
      <div class="cards">
        <Card title={t('check.camera.title')} icon={<CamIcon />} headingId="camera-heading">
          <div class="preview">
            <video ref={video} id="check-preview" class="mirror" autoplay playsInline muted aria-label={t('check.camera.preview')} />
          </div>
          <ResultLine id="check-camera" line={camera} />
        </Card>
        <Card title={t('check.mic.title')} icon={<MicIcon />} headingId="mic-heading">
          <div
            class="meter"
            role="meter"
            aria-label={t('check.mic.level')}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={level}
          >
            <div class="meter-fill" style={{ width: `${level}%` }} />
          </div>
          <p class="hint">{t('check.mic.hint')}</p>
          <ResultLine id="check-mic" line={mic} />
        </Card>
        <Card title={t('check.net.title')} icon={<QualityBars level="good" />} headingId="net-heading">
          <h3>{t('check.direct.title')}</h3>
          <ResultLine id="check-direct" line={direct} />
          <h3>{t('check.relay.title')}</h3>
          <ResultLine id="check-relay" line={relay} />
        </Card>
      </div>
      <div class="check-foot" aria-live="polite">
        {done ? (
          <p class={`summary ${allOk ? 'summary-ok' : netOk ? '' : 'summary-fail'}`}>
            {allOk ? t('check.summary.ok') : netOk ? t('check.summary.devices') : t('check.summary.network')}
          </p>
        ) : null}
        <button type="button" id="check-run" class="btn btn-primary" disabled={busy} onClick={() => setRound((n) => n + 1)}>
          {t('check.again')}
        </button>
      </div>
    </main>
  );
}

function reasonText(reason: string): string {
  const known = ['no-relay', 'relay-unreachable', 'no-candidates', 'server', 'connect', 'echo'];
  return t(`check.reason.${known.includes(reason) ? reason : 'connect'}`);
}
