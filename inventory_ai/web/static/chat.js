// The staff chat page, upgraded from plain forms to streaming. No libraries: fetch + a small
// Server-Sent Events reader (EventSource cannot POST).
//
// While an answer streams, this file shows its words and tool chips as they come. When the stream
// ends, the server's rendering of the stored answer (GET /messages/<id>, templates/_answer.html)
// takes the live view's place, so an answer looks the same live and after a reload: tables, charts
// and confirmation cards are drawn in one place, on the server.
(() => {
  "use strict";
  const { t, timezone } = JSON.parse(document.getElementById("ui-strings").textContent);
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const form = document.getElementById("ask");
  const input = document.getElementById("message");
  const send = document.getElementById("send");
  const stop = document.getElementById("stop");
  const transcript = document.getElementById("transcript");
  const conversationField = form.querySelector('input[name="conversation_id"]');
  const quick = document.querySelector(".quick");
  let running = null; // {controller, view, stopped}

  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const scroll = () => window.scrollTo(0, document.body.scrollHeight);
  const clock = new Intl.DateTimeFormat("en-GB", { timeZone: timezone, hour: "2-digit", minute: "2-digit", hour12: false });

  // --- one answer while it streams -----------------------------------------------------------
  function liveView(existing) {
    const root = existing || el("article", "msg assistant");
    root.setAttribute("aria-busy", "true"); // screen readers wait for the finished answer
    const chips = root.appendChild(el("div", "chips"));
    const reply = root.appendChild(el("div", "reply live"));
    let reasoning = null;
    const view = {
      root,
      text(piece) { reply.textContent += piece; scroll(); },
      think(piece) {
        if (!reasoning) {
          const box = el("details", "reasoning");
          box.appendChild(el("summary", "", t.thinking));
          reasoning = box.appendChild(el("div", "pre"));
          root.insertBefore(box, reply);
        }
        reasoning.textContent += piece;
      },
      chipStart(e) {
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
        const id = root.dataset.messageId;
        const response = id ? await fetch(`/messages/${encodeURIComponent(id)}`, { credentials: "same-origin" }) : null;
        if (!response || !response.ok) { root.removeAttribute("aria-busy"); return root; }
        const holder = document.createElement("template");
        holder.innerHTML = (await response.text()).trim();
        const fresh = holder.content.firstElementChild;
        root.replaceWith(fresh);
        enhance(fresh);
        return fresh;
      },
      stopped() { // a neutral ending: what was said so far stays, marked as stopped
        root.removeAttribute("aria-busy");
        chips.querySelectorAll(".chip.running").forEach((chip) => {
          chip.className = "chip stopped";
          chip.querySelector(".spinner")?.remove();
        });
        root.appendChild(el("p", "note stopped", t.stopped));
      },
      error(message, retry) {
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
  // `refused(message)` is told when the server says no before streaming (a 409, a 422, a 429).
  async function stream(url, body, view, refused) {
    const controller = new AbortController();
    running = { controller, view, stopped: false };
    busy(true);
    let ended = false;
    const again = () => stream(url, body, view, refused);
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream", "X-CSRFToken": csrf },
        body: JSON.stringify(body),
        signal: controller.signal,
        credentials: "same-origin",
      });
      if (!response.ok) {
        const problem = safeJson(await response.text());
        const message = (problem && problem.error && problem.error.message) || response.statusText;
        if (refused) refused(message);
        else view.error(message, again);
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
      if (err.name !== "AbortError") view.error(String(err.message || err), again);
    } finally {
      const stopped = running && running.stopped;
      running = null;
      if (stopped) view.stopped();
      else if (ended) await view.finish();
      busy(false);
    }
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
        }
        listConversation(e.conversation_id, body.message);
        break;
      case "delta": view.text(e.text); break;
      case "reasoning": view.think(e.text); break;
      case "tool_call_start": view.chipStart(e); break;
      case "tool_result": view.chipResult(e); break;
      default: break; // confirmation_required, done, error: the stored answer shows them
    }
  }

  // The sidebar: the conversation being talked in goes to the top, marked current, as "today".
  function listConversation(id, title) {
    const list = document.getElementById("conversation-list");
    if (!list) return;
    const href = `/c/${id}`;
    let item = [...list.querySelectorAll("li")].find((li) => li.querySelector("a").getAttribute("href") === href);
    if (!item) {
      item = el("li");
      const link = item.appendChild(el("a"));
      link.href = href;
      link.appendChild(el("span", "title", (title || "…").slice(0, 80)));
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
    time.textContent = `${t.today} ${clock.format(now)}`;
    list.prepend(item);
  }

  function busy(on) {
    send.disabled = on;
    stop.hidden = !on;
    if (quick) quick.querySelectorAll("button").forEach((b) => (b.disabled = on));
    if (!on) input.focus();
  }

  function stopAnswer() {
    if (!running) return;
    running.stopped = true;
    const id = running.view.root.dataset.messageId;
    if (id) {
      fetch(`/api/v1/chat/messages/${encodeURIComponent(id)}/cancel`, { method: "POST", headers: { "X-CSRFToken": csrf } });
    }
    running.controller.abort(); // closing the stream also cancels the answer on the server
  }

  // --- what the server drew: confirmation cards and "show all" links work in place -------------
  function enhance(answer) {
    answer.querySelectorAll("form.confirm").forEach((card) => card.addEventListener("submit", (event) => decide(event, card, answer)));
    answer.querySelectorAll("a.show-all").forEach((link) => link.addEventListener("click", (event) => showAll(event, link)));
    if (UNSETTLED.has(answer.dataset.status)) watchUntilSettled(answer);
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
    stream(`/api/v1/chat/messages/${encodeURIComponent(answer.dataset.messageId)}/decision`, body, liveView(answer), (message) => {
      answer.removeAttribute("aria-busy");
      answer.querySelectorAll(".chips, .reply.live").forEach((n) => n.remove());
      controls.forEach((c) => (c.disabled = false));
      const problem = card.appendChild(el("p", "error", message));
      problem.setAttribute("role", "alert");
    });
  }

  async function showAll(event, link) {
    event.preventDefault();
    const figure = link.closest("figure");
    link.setAttribute("aria-busy", "true");
    const response = await fetch(link.href, { headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" });
    if (!response.ok) { link.removeAttribute("aria-busy"); return; }
    const holder = document.createElement("template");
    holder.innerHTML = (await response.text()).trim();
    figure.replaceWith(holder.content);
  }

  // --- the input, the quick actions, the keyboard ---------------------------------------------
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || running) return;
    transcript.appendChild(el("div", "msg user", text));
    const view = liveView();
    transcript.appendChild(view.root);
    input.value = "";
    scroll();
    stream("/api/v1/chat", { message: text, conversation_id: conversationField.value || null }, view);
  });

  stop.addEventListener("click", stopAnswer);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && running) {
      event.preventDefault();
      stopAnswer();
    }
  });

  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

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

  document.querySelectorAll("#transcript .msg.assistant").forEach(enhance);
  if (document.querySelector('#conversation-list li[data-signoff="waiting"]')) watchSignoffMarks();
})();
