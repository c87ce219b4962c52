// The in-class quiz panel (docs/tests.md, in-class quizzes): the teacher
// launches a test attached to the class (or one of its questions), follows
// the anonymous tally and closes it; students answer by keyboard, each
// answer sent over the room socket with its saved / not saved state; after
// the close everyone sees the anonymous aggregate.
import { useEffect, useRef, useState } from 'preact/hooks';
import { t } from '../../shared/i18n';
import type { Classroom, QuizAnswer, State } from '../client';
import type { QuizAggregate, QuizQuestion, QuizResponse, QuizSlotCount, QuizState } from '../protocol';
import { timeLeft } from './format';
import { useNow } from './hooks';

const TIME_LIMITS = [0, 30, 60, 120, 300, 600];

export function Quiz({ room, s }: { room: Classroom; s: State }) {
  const op = s.permissions.includes('op');
  const q = s.quiz;
  // The announcer stays mounted in the same place, quiz or not, so it
  // sees the launch happen.
  const shown = !!q || (op && s.quizTests.length > 0);
  return (
    <>
      <QuizAnnouncer q={q} />
      {shown ? (
        <section class="quiz" aria-labelledby="quiz-heading" data-testid="quiz" data-open={q?.open ? 'true' : 'false'}>
          <div class="section-head">
            <h2 id="quiz-heading">{q?.open ? t('quiz.open') : q?.aggregate ? t('quiz.results') : t('quiz.title')}</h2>
            {q?.open && q.deadline ? <Countdown deadline={q.deadline} /> : null}
          </div>
          {q?.open ? (
            op ? (
              <TeacherOpen room={room} s={s} q={q} />
            ) : (
              <StudentForm room={room} s={s} q={q} />
            )
          ) : null}
          {q && !q.open && q.aggregate ? <Results q={q} agg={q.aggregate} /> : null}
          {op && !q?.open ? <LaunchForm room={room} s={s} /> : null}
        </section>
      ) : null}
    </>
  );
}

/** Tells screen readers that a quiz started or ended, wherever focus is. */
function QuizAnnouncer({ q }: { q: QuizState | null }) {
  const [text, setText] = useState('');
  const last = useRef<string>(q ? `${q.launchedAt}/${q.open}` : '');
  useEffect(() => {
    const key = q ? `${q.launchedAt}/${q.open}` : '';
    if (key === last.current) return;
    last.current = key;
    if (!q) return;
    setText(q.open ? t('quiz.announceOpen', { count: q.questions.length }) : t('quiz.announceClosed'));
  }, [q?.launchedAt, q?.open]);
  return (
    <div class="sr-only" role="status" aria-live="polite" data-testid="quiz-announce">
      {text}
    </div>
  );
}

/** Time left, shown each second; announced at one minute and at ten seconds. */
function Countdown({ deadline }: { deadline: string }) {
  const now = useNow(1000);
  const left = Date.parse(deadline) - now;
  const say = left <= 10_000 ? t('quiz.secondsLeft', { seconds: 10 }) : left <= 60_000 ? t('quiz.minuteLeft') : '';
  return (
    <div class={`quiz-timer ${left <= 60_000 ? 'quiz-timer-low' : ''}`}>
      <span class="quiz-timer-label">{t('quiz.timeLeft')}</span>{' '}
      <span data-testid="quiz-countdown">{timeLeft(deadline, now)}</span>
      <span class="sr-only" aria-live="polite">
        {say}
      </span>
    </div>
  );
}

function LaunchForm({ room, s }: { room: Classroom; s: State }) {
  const tests = s.quizTests;
  const [testId, setTestId] = useState(tests[0]?.id ?? 0);
  const [question, setQuestion] = useState(0);
  const [seconds, setSeconds] = useState(0);
  const test = tests.find((x) => x.id === testId) ?? tests[0];
  if (!test) return null;
  return (
    <form
      class="quiz-launch"
      onSubmit={(e) => {
        e.preventDefault();
        room.quizLaunch(test.id, question, seconds);
      }}
    >
      <label>
        <span>{t('quiz.test')}</span>
        <select
          id="quiz-test"
          value={String(test.id)}
          onChange={(e) => {
            setTestId(Number((e.target as HTMLSelectElement).value));
            setQuestion(0);
          }}
        >
          {tests.map((x) => (
            <option key={x.id} value={String(x.id)}>
              {x.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('quiz.what')}</span>
        <select id="quiz-question" value={String(question)} onChange={(e) => setQuestion(Number((e.target as HTMLSelectElement).value))}>
          <option value="0">{t('quiz.wholeTest', { count: test.questions.length })}</option>
          {test.questions.map((text, i) => (
            <option key={i} value={String(i + 1)}>
              {t('quiz.questionN', { n: i + 1 })}: {text ? short(text) : t('quiz.drawn')}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('quiz.limit')}</span>
        <select id="quiz-seconds" value={String(seconds)} onChange={(e) => setSeconds(Number((e.target as HTMLSelectElement).value))}>
          {TIME_LIMITS.map((n) => (
            <option key={n} value={String(n)}>
              {n === 0 ? t('quiz.noLimit') : n < 60 ? t('quiz.seconds', { n }) : t('quiz.minutes', { n: n / 60 })}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" id="quiz-launch" class="btn btn-primary" disabled={s.reconnecting}>
        {t('quiz.launch')}
      </button>
    </form>
  );
}

function short(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 59)}…` : one;
}

function TeacherOpen({ room, s, q }: { room: Classroom; s: State; q: QuizState }) {
  const agg = s.quizTally;
  return (
    <>
      <p class="quiz-answered" aria-live="polite" data-testid="quiz-tally">
        {t('quiz.participants', { count: agg?.participants ?? 0 })}
      </p>
      <ol class="quiz-questions">
        {q.questions.map((qq) => (
          <li key={qq.slot} class="quiz-q">
            <p class="quiz-text" dir="auto">
              {qq.text_md}
            </p>
            <Counts qq={qq} c={agg?.slots.find((x) => x.slot === qq.slot)} participants={agg?.participants ?? 0} />
          </li>
        ))}
      </ol>
      <button type="button" id="quiz-close" class="btn btn-danger" disabled={s.reconnecting} onClick={() => room.quizClose()}>
        {t('quiz.close')}
      </button>
    </>
  );
}

function Results({ q, agg }: { q: QuizState; agg: QuizAggregate }) {
  return (
    <div data-testid="quiz-results">
      <p class="quiz-answered">{t('quiz.participants', { count: agg.participants })}</p>
      <ol class="quiz-questions">
        {q.questions.map((qq) => (
          <li key={qq.slot} class="quiz-q">
            <p class="quiz-text" dir="auto">
              {qq.text_md}
            </p>
            <Counts qq={qq} c={agg.slots.find((x) => x.slot === qq.slot)} participants={agg.participants} />
          </li>
        ))}
      </ol>
    </div>
  );
}

/** One question's anonymous counts: answered, % right, a bar per choice. */
function Counts({ qq, c, participants }: { qq: QuizQuestion; c?: QuizSlotCount; participants: number }) {
  const answered = c?.answered ?? 0;
  const right = c?.right ?? 0;
  const pct = answered ? Math.round((right * 100) / answered) : 0;
  return (
    <div class="quiz-counts" data-testid="quiz-counts" data-slot={qq.slot} data-answered={answered} data-right={right}>
      <p class="quiz-count-line">
        {t('quiz.answeredOf', { answered, count: participants })}
        {qq.type !== 'description' && qq.type !== 'essay' ? ` · ${t('quiz.rightPct', { pct })}` : ''}
      </p>
      {qq.choices?.length ? (
        <ul class="quiz-bars">
          {qq.choices.map((ch) => {
            const n = c?.options?.[ch.id] ?? 0;
            const w = answered ? Math.round((n * 100) / answered) : 0;
            return (
              <li key={ch.id} class="quiz-bar" data-choice={ch.text} data-count={n}>
                <span class="quiz-bar-label" dir="auto">
                  {ch.text}
                </span>
                <span class="quiz-bar-track" aria-hidden="true">
                  <span class="quiz-bar-fill" style={{ inlineSize: `${w}%` }} />
                </span>
                <span class="quiz-bar-n">{t('quiz.chosen', { count: n, pct: w })}</span>
              </li>
            );
          })}
        </ul>
      ) : null}
    </div>
  );
}

function StudentForm({ room, s, q }: { room: Classroom; s: State; q: QuizState }) {
  return (
    <form class="quiz-form" onSubmit={(e) => e.preventDefault()}>
      <p class="quiz-hint">{t('quiz.hint')}</p>
      <ol class="quiz-questions">
        {q.questions.map((qq) => (
          <li key={qq.slot} class="quiz-q" data-testid="quiz-question" data-slot={qq.slot}>
            <Question qq={qq} a={s.quizAnswers[qq.slot]} answer={(r) => room.quizAnswer(qq.slot, r)} />
          </li>
        ))}
      </ol>
    </form>
  );
}

function SaveState({ a, id }: { a?: QuizAnswer; id: string }) {
  const text = !a
    ? t('quiz.notAnswered')
    : a.status === 'saved'
      ? t('quiz.saved')
      : a.status === 'saving'
        ? t('quiz.saving')
        : a.error
          ? `${t('quiz.notSaved')} ${a.error}`
          : t('quiz.notSavedOffline');
  return (
    <p id={id} class={`quiz-save quiz-save-${a?.status ?? 'none'}`} role="status" aria-live="polite" data-testid="quiz-save" data-status={a?.status ?? 'none'}>
      {text}
    </p>
  );
}

/** One question's inputs: native controls, so keyboard and screen readers work as everywhere. */
function Question({ qq, a, answer }: { qq: QuizQuestion; a?: QuizAnswer; answer: (r: QuizResponse) => void }) {
  const r = a?.response ?? {};
  const name = `quiz-s${qq.slot}`;
  const head = `${name}-text`;
  const status = `${name}-status`;
  const timer = useRef(0);
  // Typed answers are sent after a short pause and when leaving the field.
  const typed = (v: QuizResponse) => {
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => answer(v), 700);
  };
  const flush = (v: QuizResponse) => {
    window.clearTimeout(timer.current);
    if (JSON.stringify(v) !== JSON.stringify(r)) answer(v);
  };
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const legend = (
    <legend id={head} class="quiz-text">
      <span class="quiz-n">{t('quiz.questionN', { n: qq.slot })}</span> <bdi>{qq.text_md}</bdi>
    </legend>
  );
  switch (qq.type) {
    case 'description':
      return (
        <p class="quiz-text" dir="auto">
          {qq.text_md}
        </p>
      );
    case 'single_choice':
    case 'multiple_choice': {
      const multi = qq.type === 'multiple_choice';
      return (
        <fieldset aria-describedby={status}>
          {legend}
          {(qq.choices ?? []).map((ch) => {
            const on = multi ? (r.choices ?? []).includes(ch.id) : r.choice === ch.id;
            return (
              <label key={ch.id} class="quiz-opt">
                <input
                  type={multi ? 'checkbox' : 'radio'}
                  name={name}
                  value={ch.id}
                  checked={on}
                  onChange={(e) => {
                    const el = e.target as HTMLInputElement;
                    if (!multi) return answer({ choice: ch.id });
                    const set = new Set(r.choices ?? []);
                    if (el.checked) set.add(ch.id);
                    else set.delete(ch.id);
                    answer({ choices: (qq.choices ?? []).map((c) => c.id).filter((id) => set.has(id)) });
                  }}
                />
                <span dir="auto">{ch.text}</span>
              </label>
            );
          })}
          <SaveState a={a} id={status} />
        </fieldset>
      );
    }
    case 'true_false':
      return (
        <fieldset aria-describedby={status}>
          {legend}
          {[true, false].map((b) => (
            <label key={String(b)} class="quiz-opt">
              <input type="radio" name={name} value={String(b)} checked={r.bool === b} onChange={() => answer({ bool: b })} />
              <span>{b ? t('quiz.true') : t('quiz.false')}</span>
            </label>
          ))}
          <SaveState a={a} id={status} />
        </fieldset>
      );
    case 'short_answer':
    case 'numerical':
    case 'essay': {
      const key = qq.type === 'numerical' ? 'value' : 'text';
      const val = (qq.type === 'numerical' ? r.value : r.text) ?? '';
      const props = {
        id: name,
        name,
        'aria-labelledby': head,
        'aria-describedby': status,
        value: val,
        onInput: (e: Event) => typed({ [key]: (e.target as HTMLInputElement).value }),
        onBlur: (e: Event) => flush({ [key]: (e.target as HTMLInputElement).value }),
      };
      return (
        <fieldset>
          {legend}
          {qq.type === 'essay' ? (
            <textarea rows={4} {...props} />
          ) : (
            <input type="text" inputMode={qq.type === 'numerical' ? 'decimal' : undefined} autoComplete="off" {...props} />
          )}
          <SaveState a={a} id={status} />
        </fieldset>
      );
    }
    case 'fill_in_blanks': {
      const blanks = qq.blanks ?? [];
      const cur = blanks.map((_, i) => r.blanks?.[i] ?? '');
      const set = (i: number, v: string) => cur.map((x, k) => (k === i ? v : x));
      return (
        <fieldset aria-describedby={status}>
          {legend}
          {blanks.map((b, i) => (
            <label key={i} class="quiz-field">
              <span>{t('quiz.blankN', { n: i + 1 })}</span>
              {b.options?.length ? (
                <select value={cur[i]} onChange={(e) => answer({ blanks: set(i, (e.target as HTMLSelectElement).value) })}>
                  <option value="">{t('quiz.choose')}</option>
                  {b.options.map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  type="text"
                  autoComplete="off"
                  value={cur[i]}
                  onInput={(e) => typed({ blanks: set(i, (e.target as HTMLInputElement).value) })}
                  onBlur={(e) => flush({ blanks: set(i, (e.target as HTMLInputElement).value) })}
                />
              )}
            </label>
          ))}
          <SaveState a={a} id={status} />
        </fieldset>
      );
    }
    case 'matching':
      return (
        <fieldset aria-describedby={status}>
          {legend}
          {(qq.lefts ?? []).map((l) => (
            <label key={l.id} class="quiz-field">
              <span>{l.text}</span>
              <select
                value={r.matches?.[l.id] ?? ''}
                onChange={(e) => {
                  const v = (e.target as HTMLSelectElement).value;
                  const m = { ...(r.matches ?? {}) };
                  if (v) m[l.id] = v;
                  else delete m[l.id];
                  answer({ matches: m });
                }}
              >
                <option value="">{t('quiz.choose')}</option>
                {(qq.rights ?? []).map((x) => (
                  <option key={x.id} value={x.id}>
                    {x.text}
                  </option>
                ))}
              </select>
            </label>
          ))}
          <SaveState a={a} id={status} />
        </fieldset>
      );
    case 'ordering': {
      const items = qq.items ?? [];
      const order = r.order?.length === items.length ? r.order : items.map((x) => x.id);
      const move = (i: number, d: number) => {
        const o = [...order];
        [o[i], o[i + d]] = [o[i + d], o[i]];
        answer({ order: o });
      };
      return (
        <fieldset aria-describedby={status}>
          {legend}
          <ol class="quiz-order">
            {order.map((id, i) => {
              const it = items.find((x) => x.id === id);
              return (
                <li key={id}>
                  <span>{it?.text}</span>
                  <button type="button" class="btn btn-small" disabled={i === 0} onClick={() => move(i, -1)}>
                    {t('quiz.up')}
                    <span class="sr-only">: {it?.text}</span>
                  </button>
                  <button type="button" class="btn btn-small" disabled={i === order.length - 1} onClick={() => move(i, 1)}>
                    {t('quiz.down')}
                    <span class="sr-only">: {it?.text}</span>
                  </button>
                </li>
              );
            })}
          </ol>
          <SaveState a={a} id={status} />
        </fieldset>
      );
    }
  }
  return (
    <p class="quiz-text" dir="auto">
      {qq.text_md}
    </p>
  );
}
