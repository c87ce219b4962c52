// The attempt page: a countdown that follows the server's clock, autosave
// with a per-slot seq (last write wins across tabs), an offline queue kept
// in sessionStorage, and keyboard-operable ordering.
(function () {
  'use strict';
  var root = document.getElementById('attempt');
  if (!root) { localizeTimes(); return; }
  var d = root.dataset;
  var url = d.base + '/attempts/' + d.id;
  var open = d.state === 'in_progress';
  var deadline = d.deadline ? Date.parse(d.deadline) : null;
  // offset = server clock - client clock, in ms. The first value comes
  // from the page itself; sync() refines it with the round trip.
  var offset = d.serverNow ? Number(d.serverNow) - Date.now() : 0;
  var qkey = 'lectern-attempt-' + d.id;
  var seqs = JSON.parse(d.seqs || '{}');
  var queue = {};
  try { queue = JSON.parse(sessionStorage.getItem(qkey) || '{}'); } catch (e) { queue = {}; }
  var timers = {};
  var timeUp = false;
  var flushing = false;
  var submitting = false;

  function $(id) { return document.getElementById(id); }
  function persist() { try { sessionStorage.setItem(qkey, JSON.stringify(queue)); } catch (e) {} }
  function status(text) { var s = $('save-status'); if (s && s.textContent !== text) s.textContent = text; }
  function pending() { return Object.keys(queue).length > 0; }
  function showNotSaved(on) { var b = $('not-saved'); if (b) b.hidden = !on; }

  function sync() {
    var t0 = Date.now();
    return fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) { return r.json(); })
      .then(function (v) {
        var t1 = Date.now();
        if (v.server_now_ms) offset = v.server_now_ms + (t1 - t0) / 2 - t1;
        if (v.deadline) deadline = Date.parse(v.deadline);
        if (open && v.state && v.state !== 'in_progress' && !pending()) location.reload();
      })
      .catch(function () {});
  }

  // collect reads the learner's response to one question from the form.
  function collect(sec) {
    var slot = sec.dataset.slot, type = sec.dataset.type, name = 's' + slot;
    var q = function (sel) { return sec.querySelectorAll(sel); };
    var checked = function () { return Array.prototype.filter.call(q('input[name="' + name + '"]'), function (i) { return i.checked; }); };
    switch (type) {
      case 'single_choice': var c = checked()[0]; return c ? { choice: c.value } : {};
      case 'true_false': var b = checked()[0]; return b ? { bool: b.value === 'true' } : {};
      case 'multiple_choice': var cs = checked().map(function (i) { return i.value; }); return cs.length ? { choices: cs } : {};
      case 'short_answer': case 'essay': return { text: q('[name="' + name + '"]')[0].value };
      case 'numerical': return { value: q('[name="' + name + '"]')[0].value.trim() };
      case 'fill_in_blanks': return { blanks: Array.prototype.map.call(q('[data-blank]'), function (i) { return i.value; }) };
      case 'matching':
        var m = {};
        Array.prototype.forEach.call(q('select[data-left]'), function (s) { if (s.value) m[s.dataset.left] = s.value; });
        return { matches: m };
      case 'ordering': return { order: Array.prototype.map.call(q('li[data-id]'), function (li) { return li.dataset.id; }) };
    }
    return {};
  }

  // apply puts a queued response back into the form (after a reload).
  function apply(sec, r) {
    var name = 's' + sec.dataset.slot;
    var inputs = sec.querySelectorAll('[name="' + name + '"]');
    switch (sec.dataset.type) {
      case 'single_choice': inputs.forEach(function (i) { i.checked = i.value === r.choice; }); break;
      case 'true_false': inputs.forEach(function (i) { i.checked = r.bool !== undefined && i.value === String(r.bool); }); break;
      case 'multiple_choice': inputs.forEach(function (i) { i.checked = (r.choices || []).indexOf(i.value) >= 0; }); break;
      case 'short_answer': case 'essay': if (inputs[0]) inputs[0].value = r.text || ''; break;
      case 'numerical': if (inputs[0]) inputs[0].value = r.value || ''; break;
      case 'fill_in_blanks': sec.querySelectorAll('[data-blank]').forEach(function (i, k) { i.value = (r.blanks || [])[k] || ''; }); break;
      case 'matching': sec.querySelectorAll('select[data-left]').forEach(function (s) { s.value = (r.matches || {})[s.dataset.left] || ''; }); break;
      case 'ordering':
        var ol = sec.querySelector('ol');
        (r.order || []).forEach(function (id) { var li = ol.querySelector('li[data-id="' + id + '"]'); if (li) ol.appendChild(li); });
        break;
    }
  }

  function changed(sec) {
    if (!open || timeUp) return;
    var slot = sec.dataset.slot;
    clearTimeout(timers[slot]);
    status(d.msgSaving);
    timers[slot] = setTimeout(function () { queueSave(sec); flush(); }, 1000);
  }

  function queueSave(sec) {
    var slot = sec.dataset.slot;
    clearTimeout(timers[slot]);
    delete timers[slot];
    seqs[slot] = (seqs[slot] || 0) + 1;
    queue[slot] = { response: collect(sec), seq: seqs[slot] };
    persist();
  }

  function flush() {
    if (flushing || !pending() || timeUp) { if (!pending() && !Object.keys(timers).length) status(d.msgSaved); return Promise.resolve(); }
    flushing = true;
    var slots = Object.keys(queue);
    var chain = Promise.resolve(true);
    slots.forEach(function (slot) {
      chain = chain.then(function (ok) {
        if (!ok || timeUp) return false;
        var item = queue[slot];
        if (!item) return true;
        return fetch(url + '/answers', {
          method: 'PUT', credentials: 'same-origin',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': d.csrf },
          body: JSON.stringify({ slot: Number(slot), response: item.response, seq: item.seq })
        }).then(function (r) {
          return r.json().then(function (b) {
            if (r.ok) {
              if (!b.saved && b.seq >= item.seq) {
                // Another tab wrote a later seq: this change is newer in
                // time, so send it again above it.
                seqs[slot] = b.seq + 1; item.seq = seqs[slot]; persist();
                return true;
              }
              if (queue[slot] && queue[slot].seq === item.seq) { delete queue[slot]; persist(); }
              return true;
            }
            if (r.status === 409 && b.code !== 'time_up' && b.fields && b.fields[0] && b.fields[0].field === 'slot') {
              // A page this tab no longer may change (sequential navigation):
              // the server keeps what was saved there; drop this change.
              delete queue[slot]; persist(); return true;
            }
            if (b.code === 'time_up' || r.status === 409) { stopTime(); return false; }
            delete queue[slot]; persist(); // refused input: keep no retry loop
            return true;
          });
        }, function () { showNotSaved(true); return false; });
      });
    });
    return chain.then(function (ok) {
      flushing = false;
      if (ok) showNotSaved(false);
      if (pending() && ok) return flush();
      if (!pending() && !Object.keys(timers).length) status(d.msgSaved);
    });
  }

  function stopTime() {
    timeUp = true; queue = {}; persist();
    var b = $('time-up'); if (b) b.hidden = false;
    document.querySelectorAll('#answers input, #answers select, #answers textarea, #answers button').forEach(function (el) { el.disabled = true; });
  }

  function pad(n) { return (n < 10 ? '0' : '') + n; }
  var lastAnnounced = null;
  function tick() {
    if (!deadline || !open) return;
    var left = Math.max(0, Math.round((deadline - (Date.now() + offset)) / 1000));
    var t = $('timer');
    if (t) {
      var h = Math.floor(left / 3600), m = Math.floor(left % 3600 / 60), s = left % 60;
      t.textContent = (h ? h + ':' + pad(m) : m) + ':' + pad(s);
      t.classList.toggle('low', left <= 60);
      t.dataset.left = left;
    }
    // Screen readers hear the time once a minute, then at 10 seconds.
    var say = null;
    if (left === 10) say = d.msgSeconds.replace('{seconds}', 10);
    else if (left > 0 && left % 60 === 0) say = left === 60 ? d.msgMinute : d.msgMinutes.replace('{minutes}', left / 60);
    if (say && say !== lastAnnounced) { lastAnnounced = say; var a = $('announce'); if (a) a.textContent = say; }
    if (left <= 0 && !submitting) { submitting = true; finish(); }
  }

  // finish sends what is unsaved, then submits (the server also finishes
  // the attempt at the deadline without us).
  function finish() {
    Object.keys(timers).forEach(function (slot) { queueSave(document.getElementById('q' + slot)); });
    flush().then(function () { var f = $('submit-form'); if (f) HTMLFormElement.prototype.submit.call(f); else location.reload(); });
  }

  if (open) {
    document.querySelectorAll('section.q').forEach(function (sec) {
      sec.addEventListener('input', function () { changed(sec); });
      sec.addEventListener('change', function () { changed(sec); });
      sec.addEventListener('click', function (e) {
        var b = e.target.closest('button[data-move]');
        if (!b) return;
        var li = b.closest('li'), ol = li.parentNode, dir = Number(b.dataset.move);
        if (dir < 0 && li.previousElementSibling) ol.insertBefore(li, li.previousElementSibling);
        else if (dir > 0 && li.nextElementSibling) ol.insertBefore(li.nextElementSibling, li);
        b.focus();
        changed(sec);
      });
    });
    Object.keys(queue).forEach(function (slot) {
      var sec = document.getElementById('q' + slot);
      if (sec) { apply(sec, queue[slot].response); if (queue[slot].seq > (seqs[slot] || 0)) seqs[slot] = queue[slot].seq; }
    });
    pages();
    var sf = $('submit-form');
    if (sf) sf.addEventListener('submit', function (e) {
      if (submitting) return;
      e.preventDefault();
      if (!window.confirm(d.msgConfirm)) return;
      submitting = true;
      finish();
    });
    window.addEventListener('online', function () { flush(); });
    window.addEventListener('offline', function () { if (pending()) showNotSaved(true); });
    document.addEventListener('visibilitychange', function () { if (!document.hidden) { sync().then(tick); flush(); } });
    setInterval(function () { sync(); }, 60000);
    setInterval(function () { if (pending()) flush(); }, 5000);
    setInterval(tick, 250);
    sync().then(tick);
    tick();
    flush();
  } else {
    var s = $('submit-form');
    if (s) s.addEventListener('submit', function () { submitting = true; });
  }
  localizeTimes();

  // pages shows per_page questions at a time; with sequential navigation
  // there is no way back (the page's rule; answers already saved stay).
  function pages() {
    var per = Number(d.perPage || 0);
    if (d.navigation === 'sequential' && Number(d.pages) > 1) { sequentialPages(); return; }
    var secs = Array.prototype.slice.call(document.querySelectorAll('section.q'));
    if (!per || secs.length <= per) return;
    var count = Math.ceil(secs.length / per), at = 0;
    var nav = $('pager'), prev = $('prev'), next = $('next'), no = $('page-no'), submit = $('submit-form');
    var sequential = d.navigation === 'sequential';
    function show(p, focus) {
      at = p;
      secs.forEach(function (s, i) { s.hidden = Math.floor(i / per) !== p; });
      prev.hidden = sequential || p === 0;
      next.hidden = p === count - 1;
      if (submit) submit.hidden = p !== count - 1;
      no.textContent = d.msgPage.replace('{page}', p + 1).replace('{count}', count);
      var h = secs[p * per].querySelector('h2');
      if (h && focus) { h.tabIndex = -1; h.focus(); }
    }
    nav.hidden = false;
    prev.addEventListener('click', function () { if (at > 0) show(at - 1, true); });
    next.addEventListener('click', function () {
      Object.keys(timers).forEach(function (slot) { queueSave(document.getElementById('q' + slot)); });
      flush();
      if (at < count - 1) show(at + 1, true);
    });
    show(0, false);
  }

  // sequentialPages: the server shows only the learner's page and refuses
  // saves elsewhere; Next saves this page, moves the attempt on to the next
  // page on the server, then loads it. Offline, the learner stays put.
  function sequentialPages() {
    var at = Number(d.page), count = Number(d.pages);
    var nav = $('pager'), next = $('next'), submit = $('submit-form');
    if (!nav) return;
    nav.hidden = false;
    $('prev').hidden = true;
    next.hidden = at === count - 1;
    if (submit) submit.hidden = at !== count - 1;
    $('page-no').textContent = d.msgPage.replace('{page}', at + 1).replace('{count}', count);
    var first = document.querySelector('section.q h2');
    if (at > 0 && first) { first.tabIndex = -1; first.focus(); }
    next.addEventListener('click', function () {
      Object.keys(timers).forEach(function (slot) { queueSave(document.getElementById('q' + slot)); });
      next.disabled = true;
      flush().then(function () {
        if (pending()) throw new Error('not saved');
        return fetch(url + '/page', { method: 'PUT', credentials: 'same-origin', cache: 'no-store',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': d.csrf },
          body: JSON.stringify({ page: at + 1 }) });
      }).then(function (r) {
        if (!r.ok) throw new Error('page ' + r.status);
        location.reload();
      }).catch(function () { next.disabled = false; showNotSaved(true); });
    });
  }

  function localizeTimes() {
    document.querySelectorAll('time[datetime]').forEach(function (t) {
      var p = t.previousElementSibling;
      if (p && p.hasAttribute('data-ends')) {
        var dt = new Date(t.getAttribute('datetime'));
        var local = dt.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
        p.textContent = p.textContent.replace(/\d\d:\d\d UTC/, local);
      }
    });
  }
})();
