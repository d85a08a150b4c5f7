// The staff chat page, upgraded from plain forms to streaming. No libraries: fetch + a small
// Server-Sent Events reader (EventSource cannot POST). The server renders the same things for the
// no-JavaScript path (templates/_answer.html); table columns come from the server, defined once.
(() => {
  "use strict";
  const { t, columns } = JSON.parse(document.getElementById("ui-strings").textContent);
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const form = document.getElementById("ask");
  const input = document.getElementById("message");
  const send = document.getElementById("send");
  const stop = document.getElementById("stop");
  const transcript = document.getElementById("transcript");
  const conversationField = form.querySelector('input[name="conversation_id"]');
  let running = null; // {controller, messageId}

  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const scroll = () => window.scrollTo(0, document.body.scrollHeight);

  // --- one assistant answer on the page ------------------------------------------------------
  function answerView(existing) {
    const root = existing || el("div", "msg assistant");
    const chips = root.querySelector(".chips") || root.insertBefore(el("div", "chips"), root.firstChild);
    let reasoning = null;
    let reply = root.querySelector(".reply");
    if (!reply) { reply = el("div", "reply"); root.appendChild(reply); }
    const view = {
      root,
      text(piece) { reply.textContent += piece; scroll(); },
      think(piece) {
        if (!reasoning) {
          const box = el("details", "reasoning");
          box.appendChild(el("summary", "", t.thinking));
          reasoning = el("div", "pre");
          box.appendChild(reasoning);
          root.insertBefore(box, reply);
        }
        reasoning.textContent += piece;
      },
      chipStart(e) {
        const chip = el("div", "chip running", `⏳ ${t["tool." + e.name] || e.name} ${describeArgs(e.arguments)}`);
        chip.dataset.callId = e.tool_call_id;
        chip.setAttribute("role", "status");
        chips.appendChild(chip);
      },
      chipResult(e) {
        const chip = chips.querySelector(`[data-call-id="${CSS.escape(e.tool_call_id)}"]`) || chips.appendChild(el("div", "chip"));
        const data = safeJson(e.content);
        const label = t["tool." + e.name] || e.name;
        if (e.status === "success") {
          const count = countRows(data);
          chip.textContent = `✓ ${label}${count !== null ? ` · ${count} ${t.results}` : ""}`;
          const table = resultTable(data);
          if (table) root.insertBefore(table, reply);
        } else if (e.status === "declined") {
          chip.textContent = `✗ ${label} · ${t.declined}`;
        } else {
          chip.textContent = `✗ ${label} · ${t.failed}`;
          chip.title = (data && data.error && data.error.message) || "";
        }
        chip.className = `chip ${e.status}`;
        root.querySelectorAll(`.confirm[data-tool-call-id="${CSS.escape(e.tool_call_id)}"]`).forEach((c) => c.remove());
      },
      confirm(messageId, pending) {
        root.dataset.messageId = messageId;
        for (const p of pending) root.appendChild(confirmCard(messageId, p, view));
        scroll();
      },
      error(message, retry) {
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

  function describeArgs(args) {
    if (!args || typeof args !== "object") return "";
    const main = args.keyword || args.material || args.warehouse || args.title;
    return main ? `“${main}”` : "";
  }
  function safeJson(text) { try { return JSON.parse(text); } catch { return null; } }
  function countRows(data) {
    if (!data) return null;
    for (const key of Object.keys(columns)) if (Array.isArray(data[key])) return data.total ?? data[key].length;
    return null;
  }
  function resultTable(data) {
    if (!data) return null;
    for (const [key, cols] of Object.entries(columns)) {
      const rows = data[key];
      if (!Array.isArray(rows) || !rows.length) continue;
      const wrap = el("div", "table-wrap");
      const table = el("table", "results");
      const head = table.createTHead().insertRow();
      for (const [, label] of cols) head.appendChild(el("th", "", t[label] || label));
      const body = table.createTBody();
      for (const row of rows) {
        const tr = body.insertRow();
        for (const [field] of cols) {
          let cell = row[field] ?? "";
          if (field === "warehouse" && !cell && row.warehouses) {
            cell = Object.entries(row.warehouses).map(([w, q]) => `${w} ${q}`).join("，");
          }
          tr.insertCell().textContent = cell;
        }
      }
      wrap.appendChild(table);
      return wrap;
    }
    return null;
  }

  function confirmCard(messageId, pending, view) {
    const card = el("div", "confirm");
    card.setAttribute("role", "group");
    card.setAttribute("aria-label", t.confirm_title);
    card.dataset.toolCallId = pending.tool_call_id;
    const text = el("p");
    text.appendChild(el("strong", "", t.confirm_title));
    text.appendChild(document.createElement("br"));
    text.appendChild(el("span", "description", pending.description));
    card.appendChild(text);
    for (const [decision, cls, label] of [["approve", "approve", t.approve], ["reject", "reject", t.reject]]) {
      const button = el("button", cls, label);
      button.type = "button";
      button.addEventListener("click", () => {
        card.querySelectorAll("button").forEach((b) => (b.disabled = true));
        stream(`/api/v1/chat/messages/${messageId}/decision`, { decision, tool_call_id: pending.tool_call_id }, view);
      });
      card.appendChild(button);
    }
    return card;
  }

  // --- talking to the server ---------------------------------------------------------------
  async function stream(url, body, view) {
    const controller = new AbortController();
    running = { controller, messageId: view.root.dataset.messageId || null };
    busy(true);
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
        view.error(message, () => stream(url, body, view));
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
          handle(buffer.slice(0, cut), view, () => stream(url, body, view));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch (err) {
      if (err.name === "AbortError") view.error(t.cancelled);
      else view.error(String(err.message || err), () => stream(url, body, view));
    } finally {
      running = null;
      busy(false);
    }
  }

  function handle(block, view, retry) {
    let kind = "message";
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) kind = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    const e = safeJson(data) || {};
    switch (kind) {
      case "delta": view.text(e.text); break;
      case "reasoning": view.think(e.text); break;
      case "tool_call_start": view.chipStart(e); break;
      case "tool_result": view.chipResult(e); break;
      case "confirmation_required": view.confirm(e.message_id, e.pending); break;
      case "error": view.error(e.message, e.retry_after ? null : retry); break;
      case "done":
        view.root.dataset.messageId = e.message_id;
        view.root.dataset.status = e.status;
        if (!conversationField.value) {
          conversationField.value = e.conversation_id;
          history.replaceState(null, "", `/c/${e.conversation_id}`);
        }
        break;
      default: break;
    }
  }

  function busy(on) {
    send.disabled = on;
    stop.hidden = !on;
    if (!on) input.focus();
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || running) return;
    transcript.appendChild(el("div", "msg user", text));
    const view = answerView();
    transcript.appendChild(view.root);
    input.value = "";
    scroll();
    stream("/api/v1/chat", { message: text, conversation_id: conversationField.value || null }, view);
  });

  stop.addEventListener("click", () => {
    if (!running) return;
    const { controller, messageId } = running;
    if (messageId) {
      fetch(`/api/v1/chat/messages/${messageId}/cancel`, { method: "POST", headers: { "X-CSRFToken": csrf } });
    }
    controller.abort(); // closing the stream also cancels the answer on the server
  });

  // Confirmation cards rendered by the server get the same in-place behaviour.
  document.querySelectorAll(".msg.assistant .confirm").forEach((card) => {
    const root = card.closest(".msg.assistant");
    const view = answerView(root);
    const id = card.dataset.toolCallId;
    const description = card.querySelector(".description").textContent;
    card.replaceWith(confirmCard(root.dataset.messageId, { tool_call_id: id, description }, view));
  });

  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
})();
