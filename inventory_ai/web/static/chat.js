// The staff chat page, upgraded from plain forms to streaming. No libraries: fetch + a small
// Server-Sent Events reader (EventSource cannot POST).
//
// While an answer streams, this file shows its words and tool chips as they come. When the stream
// ends, the server's rendering of the stored answer (GET /messages/<id>, templates/_answer.html)
// takes the live view's place, so an answer looks the same live and after a reload: tables, charts
// and confirmation cards are drawn in one place, on the server.
(() => {
  "use strict";
  const { t, timezone, limit } = JSON.parse(document.getElementById("ui-strings").textContent);
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const form = document.getElementById("ask");
  const input = document.getElementById("message");
  const send = document.getElementById("send");
  const stop = document.getElementById("stop");
  const transcript = document.getElementById("transcript");
  const conversationField = form.querySelector('input[name="conversation_id"]');
  const quick = document.querySelector(".quick");
  const jump = document.getElementById("jump-latest");
  const problem = document.getElementById("ask-problem");
  const counter = document.getElementById("message-count");
  let running = null; // {controller, view, stopped}; controller is null for an answer followed by polling

  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const format = (text, values) => text.replace(/\{(\w+)\}/g, (_, key) => values[key]);
  const CJK = /[\u3400-\u9fff]/;
  // The `lang` of a text not in the page's language (the server marks stored ones the same way).
  function markLanguage(node, text) {
    const written = CJK.test(text) ? "zh-CN" : "en";
    if (!document.documentElement.lang.startsWith(written.slice(0, 2))) node.lang = written;
  }

  // --- where the eye is ---------------------------------------------------------------------------
  // Reading the newest words: the page follows a streaming answer only while its reader is at the
  // bottom; scrolled up to read something older, they stay there and "jump to latest" appears.
  const bottomGap = () => document.documentElement.scrollHeight - window.scrollY - window.innerHeight;
  const atBottom = () => bottomGap() < 80;
  const toBottom = () => window.scrollTo(0, document.documentElement.scrollHeight);
  let following = true;
  const scroll = () => { if (following) toBottom(); };
  window.addEventListener("scroll", () => {
    following = atBottom();
    if (jump) jump.hidden = following || !transcript.lastElementChild;
  }, { passive: true });
  if (jump) jump.addEventListener("click", () => { following = true; toBottom(); jump.hidden = true; input.focus({ preventScroll: true }); });

  // A finished answer in view: a card's buttons above all (they are what is asked of the reader),
  // else its end when it fits the screen, else its beginning (to read it from the start).
  function showFinished(answer) {
    const card = answer.querySelector("form.confirm");
    const room = window.innerHeight - (document.querySelector(".composer")?.offsetHeight || 0);
    if (card || answer.offsetHeight <= room) toBottom();
    else answer.scrollIntoView({ block: "start" });
    following = atBottom();
    if (jump) jump.hidden = following;
  }
  const clock = new Intl.DateTimeFormat("en-GB", { timeZone: timezone, hour: "2-digit", minute: "2-digit", hour12: false });

  // --- one answer while it streams -----------------------------------------------------------
  function liveView(existing) {
    const root = existing || el("article", "msg assistant");
    root.setAttribute("aria-busy", "true"); // screen readers wait for the finished answer
    const chips = root.appendChild(el("div", "chips"));
    const reply = root.appendChild(el("div", "reply live"));
    // From the moment a question is sent until the first word or tool: something is happening.
    let waiting = root.appendChild(el("p", "waiting"));
    waiting.setAttribute("role", "status");
    waiting.appendChild(el("span", "spinner")).setAttribute("aria-hidden", "true");
    waiting.append(t.waiting);
    const begun = () => { waiting?.remove(); waiting = null; };
    let reasoning = null;
    const view = {
      root,
      begun,
      unreachable(on) { // the connection is down: said plainly, while the page tries again
        let note = root.querySelector(".note.unreachable");
        if (!on) { note?.remove(); return; }
        if (!note) {
          note = root.appendChild(el("p", "note unreachable", t.unreachable));
          note.setAttribute("role", "status");
        }
      },
      text(piece) { begun(); reply.textContent += piece; scroll(); },
      think(piece) {
        begun();
        if (!reasoning) {
          const box = el("details", "reasoning");
          box.appendChild(el("summary", "", t.thinking));
          reasoning = box.appendChild(el("div", "pre"));
          root.insertBefore(box, reply);
        }
        reasoning.textContent += piece;
      },
      chipStart(e) {
        begun();
        const chip = el("span", "chip running");
        chip.dataset.callId = e.tool_call_id;
        const spinner = chip.appendChild(el("span", "spinner"));
        spinner.setAttribute("aria-hidden", "true");
        chip.append(`${label(e.name)} ${describeArgs(e.arguments)}`.trim());
        chips.appendChild(chip);
      },
      chipResult(e) {
        const chip = chips.querySelector(`[data-call-id="${CSS.escape(e.tool_call_id)}"]`) || chips.appendChild(el("span"));
        const mark = e.status === "success" ? "✓" : "✗";
        const why = e.status === "success" ? "" : ` · ${e.status === "declined" ? t.declined : t.failed}`;
        chip.className = `chip ${e.status}`;
        chip.textContent = `${mark} ${label(e.name)}${why}`;
      },
      // The stored answer, as the server draws it, in place of this live view.
      async finish() {
        begun();
        const id = root.dataset.messageId;
        const response = id ? await fetch(`/messages/${encodeURIComponent(id)}`, { credentials: "same-origin" }).catch(() => null) : null;
        if (!response || !response.ok) { root.removeAttribute("aria-busy"); return root; }
        const holder = document.createElement("template");
        holder.innerHTML = (await response.text()).trim();
        const fresh = holder.content.firstElementChild;
        root.replaceWith(fresh);
        enhance(fresh);
        settled(fresh);
        return fresh;
      },
      stopped() { // a neutral ending: what was said so far stays, marked as stopped
        begun();
        root.removeAttribute("aria-busy");
        chips.querySelectorAll(".chip.running").forEach((chip) => {
          chip.className = "chip stopped";
          chip.querySelector(".spinner")?.remove();
        });
        root.appendChild(el("p", "note stopped", t.stopped));
      },
      error(message, retry) {
        begun();
        root.removeAttribute("aria-busy");
        const box = el("div", "error", `${t.error}: ${message}`);
        box.setAttribute("role", "alert");
        if (retry) {
          const again = el("button", "retry", t.retry);
          again.type = "button";
          again.addEventListener("click", () => { box.remove(); retry(); });
          box.appendChild(again);
        }
        root.appendChild(box);
      },
    };
    return view;
  }

  const label = (name) => t[`tool.${name}`] || name;
  function describeArgs(args) {
    if (!args || typeof args !== "object") return "";
    const main = args.keyword || args.material || args.warehouse || args.title;
    return main ? `“${main}”` : "";
  }
  function safeJson(text) { try { return JSON.parse(text); } catch { return null; } }

  // --- talking to the server ---------------------------------------------------------------
  // What the server said no with, in words for people: each field's problem (a 422 lists them by
  // field), a session that ended ("You were logged out", with the way back here), else its message.
  function refusal(response, problem) {
    const error = (problem && problem.error) || {};
    // A stale CSRF token means this tab's session ended too (a log-out, then a log-in elsewhere).
    if (response.status === 401 || error.code === "csrf_failed") return { loggedOut: true, message: t.logged_out };
    const fields = error.details && (error.details.json || error.details.fields);
    if (fields && typeof fields === "object" && !Array.isArray(fields)) {
      const lines = Object.entries(fields).map(([name, why]) => `${t[`field.${name}`] || name}: ${[].concat(why).join(" ")}`);
      if (lines.length) return { message: lines.join("\n") };
    }
    return { message: error.message || response.statusText || String(response.status) };
  }
  // A refusal as the page shows it; a logged-out one links to the login that returns here.
  function problemNode(said, cls = "problem") {
    const node = el("div", cls, said.message);
    if (said.loggedOut) {
      node.append(" ");
      const back = node.appendChild(el("a", "log-in-again", t.log_in_again));
      back.href = `/login?next=${encodeURIComponent(location.pathname + location.search)}`;
    }
    return node;
  }
  function showProblem(said) {
    problem.replaceChildren(...problemNode(said).childNodes);
    problem.hidden = false;
  }
  function hideProblem() { problem.hidden = true; problem.replaceChildren(); }

  // The server cannot be reached (the network, a restart): tried again, a little later each time.
  const RETRY_MS = [1000, 2000, 4000, 8000, 15000];
  const retryDelay = (attempt) => window.inventoryRetryMs || RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)];
  const UNREACHABLE_STATUS = new Set([502, 504]);

  // `refused(said)` is told when the server says no before streaming (a 401, 409, 422, 429).
  async function stream(url, body, view, refused, attempt = 0) {
    const controller = new AbortController();
    running = { controller, view, stopped: false };
    busy(true);
    let ended = false;
    let lost = false;
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream", "X-CSRFToken": csrf },
        body: JSON.stringify(body),
        signal: controller.signal,
        credentials: "same-origin",
      });
      if (UNREACHABLE_STATUS.has(response.status)) throw new TypeError("unreachable");
      view.unreachable(false);
      if (!response.ok) {
        const said = refusal(response, safeJson(await response.text()));
        if (refused) refused(said);
        else view.error(said.message, () => stream(url, body, view, refused));
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          handle(buffer.slice(0, cut), view, body);
          buffer = buffer.slice(cut + 2);
        }
      }
      ended = true;
    } catch (err) {
      lost = err.name !== "AbortError"; // never shown as it is ("Failed to fetch"): said plainly below
    } finally {
      const stopped = running && running.stopped;
      running = null;
      if (stopped) view.stopped();
      else if (ended) await view.finish();
      busy(false);
      if (lost && !stopped) reconnect(url, body, view, refused, attempt);
    }
  }

  // A connection lost: an answer the server has (its id is known) is followed until it ends, since
  // a reader going away does not stop it; a question the server never got is sent again.
  function reconnect(url, body, view, refused, attempt) {
    view.unreachable(true);
    if (view.root.dataset.messageId) { follow(view.root); return; }
    const timer = setTimeout(() => stream(url, body, view, refused, attempt + 1), retryDelay(attempt));
    running = { controller: { abort() { clearTimeout(timer); } }, view, stopped: false, waitingRetry: true };
    busy(true);
  }

  function handle(block, view, body) {
    let kind = "message";
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) kind = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    const e = safeJson(data) || {};
    switch (kind) {
      case "start": // first in every stream: the page knows its conversation before anything else
        view.root.dataset.messageId = e.message_id;
        if (conversationField.value !== e.conversation_id) {
          conversationField.value = e.conversation_id;
          history.replaceState(null, "", `/c/${e.conversation_id}`);
          offerConversationMenu(e.conversation_id);
        }
        listConversation(e.conversation_id, body.message);
        if (running && running.stopped) cancelOnServer(e.message_id, true); // Stop came before this
        break;
      case "delta": view.text(e.text); break;
      case "reasoning": view.think(e.text); break;
      case "tool_call_start": view.chipStart(e); break;
      case "tool_result": view.chipResult(e); break;
      default: break; // confirmation_required, done, error: the stored answer shows them
    }
  }

  // An answer running on the server that this page has no stream of (the page was reloaded, the
  // connection dropped): asked about every second until it has ended, then shown as stored.
  const followMs = () => window.inventoryFollowMs || 1000;
  function follow(answer) {
    const id = answer.dataset.messageId;
    const adopted = !running;
    if (adopted) {
      running = { controller: null, view: { root: answer, stopped() {} }, stopped: false };
      busy(true);
    }
    const look = async () => {
      if (!answer.isConnected) return;
      const response = await fetch(`/messages/${encodeURIComponent(id)}`, { credentials: "same-origin" }).catch(() => null);
      const note = (on) => {
        const shown = answer.querySelector(".note.unreachable");
        if (!on) shown?.remove();
        else if (!shown) answer.appendChild(el("p", "note unreachable", t.unreachable)).setAttribute("role", "status");
      };
      if (!response || UNREACHABLE_STATUS.has(response.status)) { note(true); setTimeout(look, retryDelay(0)); return; }
      note(false);
      if (response.status === 401) {
        answer.appendChild(problemNode({ loggedOut: true, message: t.logged_out }, "error")).setAttribute("role", "alert");
        if (adopted) { running = null; busy(false); }
        return;
      }
      if (!response.ok) { setTimeout(look, followMs()); return; }
      const holder = document.createElement("template");
      holder.innerHTML = (await response.text()).trim();
      const fresh = holder.content.firstElementChild;
      if (!fresh || fresh.dataset.status === "running") { setTimeout(look, followMs()); return; }
      answer.replaceWith(fresh);
      if (adopted) { running = null; busy(false); }
      enhance(fresh);
      settled(fresh);
    };
    setTimeout(look, followMs());
  }

  // The sidebar: the conversation being talked in goes to the top of "today", marked current.
  function listConversation(id, title) {
    const list = document.getElementById("conversation-list");
    if (!list) return;
    const href = `/c/${id}`;
    let item = [...list.querySelectorAll("li")].find((li) => li.querySelector("a").getAttribute("href") === href);
    if (!item) {
      item = el("li");
      const link = item.appendChild(el("a"));
      link.href = href;
      const name = link.appendChild(el("span", "title", (title || "…").slice(0, 80)));
      markLanguage(name, title || "");
      link.appendChild(el("time"));
    }
    list.querySelectorAll("li.current").forEach((li) => {
      li.className = "";
      li.querySelector("a").removeAttribute("aria-current");
    });
    item.className = "current";
    item.querySelector("a").setAttribute("aria-current", "page");
    const now = new Date();
    const time = item.querySelector("time");
    time.dateTime = now.toISOString();
    time.textContent = clock.format(now);
    todaysGroup(list).prepend(item);
    list.querySelectorAll("ul").forEach((ul) => {
      if (!ul.querySelector("li")) { ul.previousElementSibling?.matches("h3.day") && ul.previousElementSibling.remove(); ul.remove(); }
    });
    list.querySelector(":scope > p.note")?.remove();
  }
  function todaysGroup(list) {
    const first = list.querySelector("h3.day");
    if (first && first.textContent.trim() === t.today) return first.nextElementSibling;
    const heading = el("h3", "day", t.today);
    const group = el("ul");
    list.prepend(heading, group);
    return group;
  }
  // Rename and delete, for a conversation that has just begun on this page.
  function offerConversationMenu(id) {
    const menu = document.querySelector(".conversation-menu");
    if (!menu) return;
    menu.querySelector("form.rename").action = `/c/${encodeURIComponent(id)}/rename`;
    menu.querySelector("form.delete").action = `/c/${encodeURIComponent(id)}/delete`;
    menu.hidden = false;
  }

  // The title the server gave the conversation (a summary of its first question), once known.
  function retitle(id, title) {
    if (!id || !title) return;
    const link = document.querySelector(`#conversation-list a[href="/c/${CSS.escape(id)}"] .title`);
    if (link && link.textContent !== title) { link.textContent = title; markLanguage(link, title); }
    const heading = document.getElementById("chat-title");
    if (heading && conversationField.value === id && heading.textContent !== title) {
      heading.textContent = title;
      heading.removeAttribute("lang");
      markLanguage(heading, title);
      const name = document.getElementById("conversation-title");
      if (name) name.value = title;
    }
  }

  function busy(on) {
    send.disabled = on;
    stop.hidden = !on;
    if (quick) quick.querySelectorAll("button").forEach((b) => (b.disabled = on));
    if (on) document.querySelectorAll(".question-actions, form.retry-question").forEach((n) => n.remove());
    if (!on) input.focus({ preventScroll: true });
  }

  function cancelOnServer(id, abort) {
    fetch(`/api/v1/chat/messages/${encodeURIComponent(id)}/cancel`, { method: "POST", headers: { "X-CSRFToken": csrf } }).catch(() => null);
    if (abort && running && running.controller) running.controller.abort();
  }

  // Only Stop (or Esc) stops an answer: the page asks the server to, then stops reading. A page that
  // is closed or reloaded stops nothing (the answer runs on and is picked up again).
  function stopAnswer() {
    if (!running) return;
    running.stopped = true;
    if (running.waitingRetry) { // the server never had the question: nothing to stop there
      running.controller.abort();
      const view = running.view;
      running = null;
      view.unreachable(false);
      view.stopped();
      busy(false);
      return;
    }
    const id = running.view.root.dataset.messageId;
    if (id) cancelOnServer(id, true); // else the stream's `start` brings the id, and the stop goes then
  }

  // A finished answer is in place: the skip link to the newest card, the sidebar's title, the eye.
  function settled(answer) {
    updateCardSkip();
    retitle(answer.dataset.conversationId, answer.dataset.conversationTitle);
    offerEdit();
    showFinished(answer);
  }

  // "Skip to the booking to confirm": the newest card's first field (its quantity), by keyboard.
  const skipToCard = document.getElementById("skip-to-card");
  function newestCard() { return [...transcript.querySelectorAll("form.confirm")].pop(); }
  function updateCardSkip() {
    if (!skipToCard) return;
    const card = newestCard();
    skipToCard.hidden = !card;
    const field = card && card.querySelector("input:not([type=hidden])");
    if (field) skipToCard.href = `#${field.id}`;
  }
  if (skipToCard) {
    skipToCard.addEventListener("click", (event) => {
      const card = newestCard();
      if (!card) return;
      event.preventDefault();
      card.scrollIntoView({ block: "center" });
      card.querySelector("input:not([type=hidden]), button[name=decision]").focus({ preventScroll: true });
    });
  }

  // "Edit and resend" under the latest question, once its answer has ended.
  function offerEdit() {
    document.querySelectorAll(".question-actions").forEach((n) => n.remove());
    const last = [...transcript.querySelectorAll(".msg.user")].pop();
    const answer = [...transcript.querySelectorAll(".msg.assistant")].pop();
    if (!last || running || !conversationField.value) return;
    if (answer && ["running", "awaiting_confirmation"].includes(answer.dataset.status)) return; // decide it first
    const actions = el("div", "question-actions");
    const link = actions.appendChild(el("a", "edit-question", t.edit_question));
    link.href = `/c/${conversationField.value}?edit=${encodeURIComponent(last.dataset.messageId || "")}#message`;
    link.dataset.text = last.textContent;
    last.after(actions);
  }

  // --- what the server drew: confirmation cards and "show all" links work in place -------------
  function enhance(answer) {
    answer.querySelectorAll("form.confirm").forEach((card) => card.addEventListener("submit", (event) => decide(event, card, answer)));
    answer.querySelectorAll("a.show-all").forEach((link) => {
      link.addEventListener("click", (event) => showAll(event, link));
      if (shownWhole().has(callOf(link))) showAll(null, link);
    });
    answer.querySelector("form.retry-question")?.addEventListener("submit", (event) => {
      event.preventDefault();
      askQuestion(event.currentTarget.elements.message.value);
    });
    if (answer.dataset.status === "running" && answer === transcript.querySelector(".msg.assistant:last-of-type")) follow(answer);
    else if (UNSETTLED.has(answer.dataset.status)) watchUntilSettled(answer);
    if (answer.dataset.status === "awaiting_signoff") watchSignoffMarks();
  }

  // An answer that is not this page's live stream and has not ended: a booking waiting for a
  // manager's sign-off, or one being carried out elsewhere right now (the manager's decision
  // resumes it; another tab is streaming it). The page asks now and then how it stands and shows
  // the outcome when it has ended, without a reload.
  const UNSETTLED = new Set(["awaiting_signoff", "running"]);
  const pollMs = () => window.inventoryPollMs || 15000;
  function watchUntilSettled(answer) {
    setTimeout(async () => {
      if (!answer.isConnected) return;
      const response = await fetch(`/messages/${encodeURIComponent(answer.dataset.messageId)}`, { credentials: "same-origin" }).catch(() => null);
      if (!response || !response.ok) { watchUntilSettled(answer); return; }
      const holder = document.createElement("template");
      holder.innerHTML = (await response.text()).trim();
      const fresh = holder.content.firstElementChild;
      if (!fresh || fresh.dataset.status === answer.dataset.status) { watchUntilSettled(answer); return; }
      answer.replaceWith(fresh);
      enhance(fresh);
    }, pollMs());
  }

  // The sidebar marks a conversation whose booking waits for a manager's sign-off, and then its
  // outcome (signed off, rejected, expired) until the conversation is opened: asked now and then
  // while anything on the page waits, so a decision shows without a reload.
  let watchingMarks = false;
  function watchSignoffMarks() {
    if (watchingMarks) return;
    watchingMarks = true;
    const look = async () => {
      const response = await fetch("/api/v1/conversations", { credentials: "same-origin" }).catch(() => null);
      const listed = response && response.ok ? await response.json().catch(() => null) : null;
      if (Array.isArray(listed)) listed.forEach((c) => markConversation(c.id, c.signoff));
      const waits = '#conversation-list li[data-signoff="waiting"], #transcript .msg.assistant[data-status="awaiting_signoff"]';
      if (document.querySelector(waits)) setTimeout(look, pollMs());
      else watchingMarks = false;
    };
    setTimeout(look, pollMs());
  }
  function markConversation(id, mark) {
    const list = document.getElementById("conversation-list");
    const link = list && list.querySelector(`a[href="/c/${CSS.escape(id)}"]`);
    if (!link) return;
    const item = link.closest("li");
    let badge = link.querySelector(".signoff-mark");
    if (!mark) {
      delete item.dataset.signoff;
      if (badge) badge.remove();
      return;
    }
    item.dataset.signoff = mark;
    if (!badge) {
      badge = el("span", "signoff-mark");
      (link.querySelector(".title") || link.firstChild).after(badge);
    }
    badge.textContent = t[`mark_${mark}`] || mark;
  }

  function decide(event, card, answer) {
    event.preventDefault();
    if (running) return;
    // Only a click on Approve or Reject decides; a submit with no such button (Enter in a field,
    // should the form's disabled default button ever be missing) decides nothing.
    const decision = event.submitter && event.submitter.name === "decision" ? event.submitter.value : null;
    if (decision !== "approve" && decision !== "reject") return;
    const body = { decision, tool_call_id: card.dataset.toolCallId };
    const reason = card.elements.reason ? card.elements.reason.value.trim() : "";
    if (reason) body.reason = reason;
    const quantity = card.elements.quantity;
    if (decision === "approve" && quantity && quantity.value.trim() !== card.elements.asked_quantity.value) {
      if (!quantity.checkValidity()) { quantity.reportValidity(); return; }
      body.arguments = { quantity: Number(quantity.value) };
    }
    const controls = card.querySelectorAll("button[name=decision], input");
    controls.forEach((c) => (c.disabled = true));
    card.querySelector(".error")?.remove();
    stream(`/api/v1/chat/messages/${encodeURIComponent(answer.dataset.messageId)}/decision`, body, liveView(answer), (said) => {
      answer.removeAttribute("aria-busy");
      answer.querySelectorAll(".chips, .reply.live, .waiting").forEach((n) => n.remove());
      controls.forEach((c) => (c.disabled = false));
      const problem = card.appendChild(problemNode(said, "error"));
      problem.setAttribute("role", "alert");
    });
  }

  // "Show all" of a table is kept in the address (?all=<call ids>), so a reload shows it whole again.
  const callOf = (link) => (link.getAttribute("href").match(/\/calls\/([^/?#]+)\/all/) || [])[1];
  const shownWhole = () => new Set((new URLSearchParams(location.search).get("all") || "").split(",").filter(Boolean));
  function rememberShownWhole(id) {
    const ids = shownWhole();
    if (!id || ids.has(id)) return;
    ids.add(id);
    const url = new URL(location.href);
    url.searchParams.set("all", [...ids].join(","));
    history.replaceState(null, "", url);
  }

  async function showAll(event, link) {
    if (event) event.preventDefault();
    const figure = link.closest("figure");
    link.setAttribute("aria-busy", "true");
    const response = await fetch(link.href, { headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" }).catch(() => null);
    if (!response || !response.ok) { link.removeAttribute("aria-busy"); return; }
    const holder = document.createElement("template");
    holder.innerHTML = (await response.text()).trim();
    figure.replaceWith(holder.content);
    rememberShownWhole(callOf(link));
    if (following) toBottom();
  }

  // --- the message box, the quick actions, the keyboard ----------------------------------------
  // A question goes into the conversation at once and its answer streams under it. Refused before
  // it was asked (logged out, too long, too many), it goes back into the box: nothing typed is lost.
  function askQuestion(text) {
    if (!text || running) return;
    hideProblem();
    const bubble = el("div", "msg user", text);
    markLanguage(bubble, text);
    transcript.appendChild(bubble);
    const view = liveView();
    transcript.appendChild(view.root);
    following = true;
    scroll();
    stream("/api/v1/chat", { message: text, conversation_id: conversationField.value || null }, view, (said) => {
      bubble.remove();
      view.root.remove();
      if (!input.value.trim()) input.value = text;
      keepDraft();
      count();
      showProblem(said);
    });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || running) return;
    input.value = "";
    keepDraft();
    count();
    askQuestion(text);
  });

  stop.addEventListener("click", stopAnswer);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && running) {
      event.preventDefault();
      stopAnswer();
    }
  });

  // Enter sends, Shift+Enter is a new line; an Enter that ends an IME composition (pinyin) only
  // chooses the characters.
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  // How much room is left, shown from 80 % of the limit, before the box stops taking more.
  function count() {
    if (!counter) return;
    const used = input.value.length;
    counter.hidden = used < limit * 0.8;
    counter.textContent = format(t.count, { count: used.toLocaleString("en"), limit: limit.toLocaleString("en") });
    counter.classList.toggle("full", used >= limit);
  }
  // What is typed survives a reload and a log-in in between (this tab only).
  const draftKey = () => `inventory-draft:${conversationField.value || "new"}`;
  function keepDraft() {
    try {
      if (input.value.trim()) sessionStorage.setItem(draftKey(), input.value);
      else sessionStorage.removeItem(draftKey());
    } catch { /* storage refused: the draft is only in the box */ }
  }
  input.addEventListener("input", () => { count(); keepDraft(); hideProblem(); });

  if (quick) {
    quick.hidden = false; // they need this script: without it they stay hidden
    quick.addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button || running) return;
      input.value = button.dataset.text;
      if (button.dataset.does === "send") form.requestSubmit();
      else {
        input.focus();
        input.setSelectionRange(input.value.length, input.value.length);
      }
    });
  }

  // "Edit and resend": the question back in the box, to change and send as a new one.
  transcript.addEventListener("click", (event) => {
    const link = event.target.closest("a.edit-question");
    if (!link || running) return;
    event.preventDefault();
    input.value = link.dataset.text;
    count();
    keepDraft();
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  });

  // Searching the conversations as one types (the form alone, without this, searches on Enter).
  const search = document.getElementById("conversation-q");
  if (search) {
    let timer = null;
    const find = async () => {
      const params = new URLSearchParams({ q: search.value.trim(), current: conversationField.value });
      const response = await fetch(`/conversation-list?${params}`, { credentials: "same-origin" }).catch(() => null);
      if (response && response.ok) document.getElementById("conversation-list").innerHTML = await response.text();
    };
    search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(find, 250); });
    search.form.addEventListener("submit", (event) => { event.preventDefault(); clearTimeout(timer); find(); });
  }

  // --- the page as it opens ------------------------------------------------------------------
  try {
    const draft = sessionStorage.getItem(draftKey());
    if (draft && !input.value) input.value = draft;
  } catch { /* no storage: nothing kept */ }
  count();
  document.querySelectorAll("#transcript .msg.assistant").forEach(enhance);
  if (document.querySelector('#conversation-list li[data-signoff="waiting"]')) watchSignoffMarks();
  updateCardSkip();
  // Opening a conversation lands at its latest message, as a chat app does.
  if (transcript.lastElementChild) toBottom();
})();
