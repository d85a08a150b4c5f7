// What every staff page does with a little script (no libraries; the chat page adds chat.js):
// the menu that holds the navigation on a phone or a tablet, and result tables that say when they
// scroll sideways and can be copied or downloaded as CSV. Without this script the pages still work:
// the menu link shows the navigation by its #sidebar target, the tables still scroll.
(() => {
  "use strict";
  const words = JSON.parse(document.getElementById("page-strings").textContent);

  // --- the menu (narrow screens) ----------------------------------------------------------------
  function menu() {
    const link = document.querySelector(".menu-toggle");
    const sidebar = document.getElementById("sidebar");
    if (!link || !sidebar) return;
    // Without this script the menu is a link to #sidebar; with it, a real button that opens and closes.
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.className = link.className;
    toggle.innerHTML = link.innerHTML;
    for (const name of ["aria-controls", "aria-expanded"]) toggle.setAttribute(name, link.getAttribute(name));
    link.replaceWith(toggle);
    const backdrop = document.createElement("div");
    backdrop.className = "menu-backdrop";
    backdrop.hidden = true;
    sidebar.after(backdrop);
    const setOpen = (open, focusBack) => {
      sidebar.classList.toggle("open", open);
      backdrop.hidden = !open;
      toggle.setAttribute("aria-expanded", String(open));
      if (open) (sidebar.querySelector("a, button, input") || sidebar).focus();
      else if (focusBack) toggle.focus();
    };
    toggle.addEventListener("click", (event) => {
      event.preventDefault();
      setOpen(!sidebar.classList.contains("open"), true);
    });
    backdrop.addEventListener("click", () => setOpen(false, true));
    document.addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || !sidebar.classList.contains("open")) return;
      event.stopImmediatePropagation(); // this Esc closes the menu; it does not also stop an answer
      setOpen(false, true);
    });
    // Back on a wide screen the sidebar is always there: nothing stays "open" behind it.
    window.matchMedia("(min-width: 901px)").addEventListener("change", (m) => { if (m.matches) setOpen(false, false); });
  }

  // --- result tables ----------------------------------------------------------------------------
  // A cell a spreadsheet would read as a formula (= + - @, or a tab or return first) is written with
  // a leading apostrophe, so a downloaded or pasted table never runs anything. Plain numbers (-20,
  // +3.5) are numbers, not formulas, and stay as they are.
  const NUMBER = /^[+-]?\d[\d,]*(\.\d+)?$/;
  function neutralised(text) {
    const cell = text.replace(/\s+/g, " ").trim();
    return /^[=+\-@\t\r]/.test(cell) && !NUMBER.test(cell) ? `'${cell}` : cell;
  }
  function cellsOf(table) {
    return [...table.rows].map((row) => [...row.cells].map((cell) => neutralised(cell.textContent)));
  }
  const csvCell = (cell) => (/[",\n\r]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell);

  function fileName(figure) {
    const caption = figure.querySelector("figcaption")?.textContent.trim() || words.table;
    const day = new Date().toISOString().slice(0, 10);
    return `${caption.replace(/[\\/:*?"<>|\s]+/g, "_").slice(0, 60)}-${day}.csv`;
  }

  async function copy(table, button) {
    const text = cellsOf(table).map((row) => row.join("\t")).join("\n");
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const area = document.createElement("textarea"); // an older or stricter browser
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    const said = button.textContent;
    button.textContent = `✓ ${words.copied}`;
    setTimeout(() => { button.textContent = said; }, 2000);
  }

  function download(table, figure) {
    // A byte order mark so spreadsheets read the Chinese as UTF-8; lines end in CRLF (RFC 4180).
    const text = "\ufeff" + cellsOf(table).map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
    link.download = fileName(figure);
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }

  function button(text, cls, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = text;
    b.addEventListener("click", onClick);
    return b;
  }

  function enhanceTable(figure) {
    if (figure.dataset.enhanced) return;
    const table = figure.querySelector("table");
    const wrap = figure.querySelector(".table-wrap");
    if (!table || !wrap) return;
    figure.dataset.enhanced = "1";
    const tools = document.createElement("div");
    tools.className = "table-tools";
    tools.appendChild(button(words.copy, "table-copy", (event) => copy(table, event.currentTarget)));
    tools.appendChild(button(words.csv, "table-csv", () => download(table, figure)));
    figure.appendChild(tools);
    const hint = document.createElement("p");
    hint.className = "scroll-hint";
    hint.textContent = `↔ ${words.wide}`;
    hint.hidden = true;
    wrap.before(hint);
    const measure = () => {
      const wide = wrap.scrollWidth > wrap.clientWidth + 1;
      hint.hidden = !wide;
      wrap.classList.toggle("scrolls", wide);
      if (wide) wrap.setAttribute("tabindex", "0"); // a scrolling region reachable by keyboard
      else wrap.removeAttribute("tabindex");
      wrap.setAttribute("role", "region");
      wrap.setAttribute("aria-label", figure.querySelector("figcaption")?.textContent.trim() || words.table);
    };
    measure();
    new ResizeObserver(measure).observe(wrap);
  }

  function enhanceTables(root) {
    root.querySelectorAll("figure.result").forEach(enhanceTable);
  }

  menu();
  enhanceTables(document);
  // The chat page draws answers after load (a finished stream, "show all"): their tables too.
  new MutationObserver((changes) => {
    for (const change of changes) {
      change.addedNodes.forEach((node) => {
        if (node.nodeType !== 1) return;
        if (node.matches("figure.result")) enhanceTable(node);
        else enhanceTables(node);
      });
    }
  }).observe(document.body, { childList: true, subtree: true });
})();
