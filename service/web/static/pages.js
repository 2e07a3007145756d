// Small World by Mail: the little the pages do with JavaScript. Everything works without it; this makes
// the map clickable in one step, the redeploy inputs into steppers with a running total, and the deadline
// tick. Loaded once; the handlers are delegated, so pages swapped in by htmx need nothing more.
"use strict";

// A tap (click, Enter) on a region of the turn page's map. A region whose one legal action is a plain
// conquest submits it at once (the map form); other regions keep their link to their panel (htmx swaps the
// page in place). While redeploying, a tap on a region of yours moves tokens: the first tap takes a token
// from it, the next puts it on the region tapped (the number boxes change; the player saves them).
let fromMap = false;
let moveFrom = null;
let lastRegion = null;

document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest("a.region-link");
  if (!link) return;
  fromMap = true;
  lastRegion = link.dataset.region;
  if (link.dataset.redeploy) {
    event.preventDefault();
    redeployTap(link);
    return;
  }
  const form = document.getElementById("map-form");
  if (!link.dataset.action && openPanelInPlace(link)) {
    event.preventDefault();
    return;
  }
  if (!link.dataset.action || !form) return;
  event.preventDefault();
  form.elements.type.value = link.dataset.action;
  form.elements.region.value = link.dataset.region;
  form.elements.troop.value = link.dataset.troop || "";
  form.requestSubmit();
});

// A region's panel opens in place (issue 35): its part of the page is fetched and put in its slot, the page
// and the map stay where they are, the focus moves into the panel; Close (or Escape) puts the focus back on
// the region. Without JavaScript the region's link loads the page with the panel.
let panelRequest = 0;

function openPanelInPlace(link) {
  const slot = document.querySelector("[data-panel-slot]");
  const href = link.getAttribute("href") || "";
  if (!slot || !href.includes("region=")) return false;
  const serial = ++panelRequest;
  fetch(href.split("#")[0], { credentials: "same-origin", headers: { Accept: "text/html" } })
    .then((response) => (response.ok ? response.text() : Promise.reject(response.status)))
    .then((html) => {
      if (serial !== panelRequest) return; // a later tap won
      const panel = new DOMParser().parseFromString(html, "text/html").getElementById("region-panel");
      if (!panel) return Promise.reject("no panel");
      slot.replaceChildren(document.importNode(panel, true));
      selectOnMap(link.dataset.region);
      const shown = slot.querySelector("#region-panel");
      if (window.htmx) window.htmx.process(shown); // its forms are sent by htmx, as the page's others
      shown.tabIndex = -1;
      keepInView(shown);
      const first = panelFocus(shown);
      first.focus({ preventScroll: true });
      keepInView(first);
      const title = shown.querySelector("h3");
      announce(title ? `${title.textContent.trim()}: ${shown.querySelector("p") ? shown.querySelector("p").textContent.trim() : ""}` : "");
    })
    .catch(() => {
      location.href = href; // the panel as a page, as without JavaScript
    });
  return true;
}

function selectOnMap(region) {
  for (const old of document.querySelectorAll("a.region-link.selected")) old.classList.remove("selected");
  for (const drawn of document.querySelectorAll(".board-map .selected-outline")) drawn.remove();
  const link = region === undefined ? null : document.querySelector(`a.region-link[data-region="${region}"]`);
  if (link) link.classList.add("selected");
}

function closePanel() {
  const panel = document.getElementById("region-panel");
  if (!panel) return false;
  const region = panel.dataset.region;
  panel.remove();
  selectOnMap(undefined);
  const link = document.querySelector(`a.region-link[data-region="${region}"]`);
  if (link) {
    if (typeof makeTabStop === "function") makeTabStop(link);
    link.focus({ preventScroll: true });
  }
  return true;
}

document.addEventListener("submit", (event) => {
  const form = event.target.closest && event.target.closest("form[data-close-panel]");
  if (form && closePanel()) {
    event.preventDefault();
    event.stopPropagation();
  }
}, true);

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && event.target.closest && event.target.closest("#region-panel") && closePanel()) {
    event.preventDefault();
  }
});

function regionWords(link) {
  return (link.getAttribute("aria-label") || "").split(",")[0];
}

function redeployTap(link) {
  const input = document.getElementById(link.dataset.redeploy);
  if (!input) return;
  const previous = moveFrom && document.getElementById(moveFrom.dataset.redeploy);
  if (!previous || moveFrom === link) {
    // The first tap: take a token from this region, if it can spare one.
    if (moveFrom === link) {
      selectFrom(null);
      announce(`${regionWords(link)}: no longer selected.`);
      return;
    }
    const value = parseInt(input.value, 10) || 0;
    if (value <= (parseInt(input.min || "0", 10) || 0)) {
      announce(`${regionWords(link)} keeps what it has: choose a region with more tokens to take one from it.`);
      return;
    }
    selectFrom(link);
    announce(`Taking a token from ${regionWords(link)}: now choose the region to put it on.`);
    return;
  }
  previous.value = String((parseInt(previous.value, 10) || 0) - 1);
  input.value = String((parseInt(input.value, 10) || 0) + 1);
  for (const changed of [previous, input]) changed.dispatchEvent(new Event("input", { bubbles: true }));
  const from = regionWords(moveFrom);
  selectFrom(null);
  announce(`One token moved from ${from} to ${regionWords(link)}: now ${previous.value} and ${input.value}. Save when you are done.`);
}

function selectFrom(link) {
  if (moveFrom) moveFrom.classList.remove("move-from");
  moveFrom = link;
  if (link) link.classList.add("move-from");
}

// The live region (base.html): says the status after each step, and what a tap on the map did.
function announce(text) {
  const announcer = document.getElementById("announcer");
  if (!announcer) return;
  announcer.textContent = "";
  // A new text in a second task, so the same words said twice are said again.
  setTimeout(() => {
    announcer.textContent = text;
  }, 60);
}

// Steppers: − and + buttons around each number input of a redeploy form, and the count placed so far.
function enhanceSteppers(root) {
  for (const input of root.querySelectorAll("form.redeploy .stepper input[type=number]")) {
    if (input.closest(".controls")) continue;
    const controls = document.createElement("div");
    controls.className = "controls";
    const label = input.labels && input.labels[0] ? input.labels[0].textContent.trim() : "this region";
    const minus = button("−", `One token fewer on ${label}`, -1);
    const plus = button("+", `One token more on ${label}`, +1);
    input.replaceWith(controls);
    controls.append(minus, input, plus);
  }
  for (const form of root.querySelectorAll("form.redeploy")) updatePlaced(form);
}

function button(text, label, step) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.setAttribute("aria-label", label);
  b.dataset.step = String(step);
  return b;
}

document.addEventListener("click", (event) => {
  const b = event.target.closest && event.target.closest(".stepper .controls button[data-step]");
  if (!b) return;
  const input = b.parentElement.querySelector("input");
  const value = (parseInt(input.value, 10) || 0) + parseInt(b.dataset.step, 10);
  const min = parseInt(input.min || "0", 10);
  input.value = String(Math.max(min, value));
  input.dispatchEvent(new Event("input", { bubbles: true }));
});

document.addEventListener("input", (event) => {
  const form = event.target.closest && event.target.closest("form.redeploy");
  if (!form) return;
  keepWithinCount(form, event.target);
  updatePlaced(form);
});

// Redeployment that cannot contradict itself (issue 35). The counts never pass the troop's tokens: a box
// typed or stepped past what is left is brought back to it, and "+" is disabled once every token is placed.
// The map and each region's spoken name show the fields' spread, marked as proposed until it is saved, and
// the instruction and "End turn" follow whether the fields hold changes not saved.
function numberInputs(form) {
  return Array.from(form.querySelectorAll("input[type=number]"));
}

function total(form) {
  return numberInputs(form).reduce((sum, input) => sum + (parseInt(input.value, 10) || 0), 0);
}

function keepWithinCount(form, changed) {
  const count = parseInt(form.dataset.count, 10);
  if (!changed || changed.type !== "number" || Number.isNaN(count)) return;
  const over = total(form) - count;
  if (over > 0) {
    changed.value = String(Math.max(0, (parseInt(changed.value, 10) || 0) - over));
    announce(`All ${count} tokens are placed: take one from another region first.`);
  }
}

function updatePlaced(form) {
  const count = parseInt(form.dataset.count, 10);
  const placed = total(form);
  const out = form.querySelector("[data-placed]");
  if (out) {
    out.textContent = String(placed);
    out.parentElement.classList.toggle("wrong", placed !== count);
    const left = out.parentElement.querySelector("[data-left]");
    if (left) left.textContent = placed < count ? ` (${count - placed} still to place)` : "";
  }
  for (const input of numberInputs(form)) {
    const value = parseInt(input.value, 10) || 0;
    const controls = input.closest(".controls");
    if (controls) {
      const minus = controls.querySelector('button[data-step="-1"]');
      const plus = controls.querySelector('button[data-step="1"]');
      if (minus) minus.disabled = value <= (parseInt(input.min || "0", 10) || 0);
      if (plus) plus.disabled = !Number.isNaN(count) && placed >= count;
    }
    showOnMap(input);
  }
  showUnsaved();
}

// A region's count on the map and in its spoken name: the field's, marked "proposed" while it differs from
// what is saved (the field's data-saved).
function showOnMap(input) {
  const match = /^tokens-(\d+)$/.exec(input.id || "");
  if (!match || input.dataset.saved === undefined) return;
  const region = match[1];
  const saved = input.dataset.saved;
  const value = String(parseInt(input.value, 10) || 0);
  const proposed = value !== saved;
  const count = document.querySelector(`[data-labels="${region}"] .chip .count`);
  if (count) {
    count.textContent = value;
    count.classList.toggle("changed", proposed);
  }
  const link = document.querySelector(`a.region-link[data-region="${region}"]`);
  if (link) {
    if (link.dataset.savedLabel === undefined) link.dataset.savedLabel = link.getAttribute("aria-label") || "";
    const tokens = (n) => `${n} token${n === "1" ? "" : "s"}`;
    const said = proposed ? `${tokens(value)} proposed, ${saved} saved` : tokens(saved);
    link.setAttribute("aria-label", link.dataset.savedLabel.replace(/\b\d+ tokens?\b/, said));
  }
}

// Changes not saved: the note says so and "End turn" waits (the rule stated on the page).
function showUnsaved() {
  const unsaved = Array.from(document.querySelectorAll("form.redeploy input[data-saved]")).some(
    (input) => String(parseInt(input.value, 10) || 0) !== input.dataset.saved,
  );
  const note = document.querySelector("[data-unsaved-note]");
  const end = document.querySelector("[data-end-turn]");
  if (note) note.hidden = !(unsaved && end);
  if (end) end.hidden = unsaved;
  const step = document.querySelector("#turn-status .next-step");
  if (step && note && end) {
    if (step.dataset.savedWords === undefined) step.dataset.savedWords = step.textContent;
    step.textContent = unsaved ? note.textContent.trim() : step.dataset.savedWords;
  }
}

// A step changes the page in place: htmx swaps it; the window and the map's box keep their scroll and zoom
// (the page at the same address), then the focus goes to the new status, which the live region reads.
let kept = null;
document.addEventListener("htmx:beforeSwap", () => {
  const box = document.querySelector("[data-map-scroll]");
  kept = {
    path: location.pathname,
    phase: (document.getElementById("main") || {}).className,
    x: window.scrollX,
    y: window.scrollY,
    map: box ? { left: box.scrollLeft, top: box.scrollTop, zoom: box.style.getPropertyValue("--zoom") } : null,
    fromMap,
    region: fromMap ? lastRegion : null,
  };
  fromMap = false;
  moveFrom = null;
});

function restore() {
  if (!kept || kept.path !== location.pathname) return;
  const box = document.querySelector("[data-map-scroll]");
  if (box && kept.map) {
    if (kept.map.zoom) box.style.setProperty("--zoom", kept.map.zoom);
    box.scrollLeft = kept.map.left;
    box.scrollTop = kept.map.top;
  }
  window.scrollTo(kept.x, kept.y);
}
document.addEventListener("htmx:afterSwap", restore);

document.addEventListener("htmx:afterSettle", () => {
  const step = kept;
  restore();
  kept = null;
  measureSheet();
  const main = document.getElementById("main");
  const turnMap = document.querySelector(".turn-map [data-map-scroll]");
  // A new phase (a pick made, the conquests over) or another page: the map is framed afresh.
  if (turnMap && (!step || step.path !== location.pathname || step.phase !== (main && main.className))) {
    mapToTop(turnMap);
    frameMap(turnMap);
  }
  const status = document.getElementById("turn-status");
  if (status) {
    focusOnTurnPage(status, step);
  } else {
    showConfirmation(step);
  }
  announceStatus();
});

// Every confirmation is seen and focused (issue 35). Another page than the one the step was taken on (the
// game page after the turn ended), or a page that says what the step did (saved choices, a refusal): it is
// shown from its top, with the focus on what it says first, so neither the eye nor a screen reader starts
// where the old page was scrolled to.
function showConfirmation(step) {
  const main = document.getElementById("main");
  if (!main) return;
  const message = main.querySelector(".messages .message, .message[role=alert]");
  const elsewhere = !step || step.path !== location.pathname;
  if (message || elsewhere) window.scrollTo(0, 0);
  const target = message || main;
  if (message) message.tabIndex = -1;
  target.focus({ preventScroll: true });
  if (message) message.scrollIntoView({ block: "nearest" });
}

// The turn page: the confirmation the step asks for (end the turn, go In Decline), or the refusal, is
// focused; else the new status. After a tap on the map the page stays where it is.
function focusOnTurnPage(status, step) {
  const main = document.getElementById("main");
  const confirm = main && main.querySelector(".confirm[data-confirmation]");
  const refusal = status.querySelector(".message-refusal");
  const panel = main && main.querySelector("#region-panel");
  const onMap = rovingMap(step && step.region);
  const target = confirm || refusal || (panel && panelFocus(panel)) || nextAction(step) || onMap || status;
  if (target === confirm || target === refusal) target.tabIndex = -1;
  target.focus({ preventScroll: true });
  // The step's result is always seen (the page kept its scroll: a shorter page may have left it above).
  if (status.getBoundingClientRect().top < 0) keepInView(status);
  if (target.closest(".turn-map")) {
    showInBox(target);
    drawRing(target);
  } else {
    const fromMap = Boolean(step && step.fromMap && step.path === location.pathname);
    if (!fromMap || target !== status) keepInView(target);
  }
}

// Into a region's panel: its first action (or its Close button when it offers none).
function panelFocus(panel) {
  return panel.querySelector(".button-row button") || panel;
}

// Scroll only as much as needed for ``el`` to be seen whole (inside the phone's sheet, then the window).
function keepInView(el) {
  const box = el.getBoundingClientRect();
  const sheet = el.closest("[data-sheet]");
  if (sheet && getComputedStyle(sheet).position === "fixed") {
    // In the phone's sheet, under its status (which stays at the sheet's top): at the sheet's bottom.
    const status = sheet.querySelector(".turn-now");
    const top = status && !status.contains(el) ? status.getBoundingClientRect().bottom : sheet.getBoundingClientRect().top;
    const bottom = sheet.getBoundingClientRect().bottom - 8;
    if (box.top < top || box.bottom > bottom) sheet.scrollTop += box.bottom > bottom || box.height > bottom - top ? box.bottom - bottom : box.top - top;
    return;
  }
  // Beside the map (a desktop) the status stays at the top of the window while the actions scroll: below it.
  const status = document.querySelector("[data-sheet] .turn-now");
  const sticky = status && !status.contains(el) && getComputedStyle(status).position === "sticky";
  const top = sticky ? Math.max(0, status.getBoundingClientRect().bottom) : 0;
  if (box.bottom > innerHeight) window.scrollBy(0, Math.min(box.bottom - innerHeight + 8, box.top - top - 8));
  else if (box.top < top) window.scrollBy(0, box.top - top - 8);
}

// What the page has to say (the last step's feedback, the turn's next step), into the live region.
function announceStatus() {
  const words = Array.from(document.querySelectorAll("#main [data-announce]"))
    .map((el) => el.textContent.trim())
    .filter(Boolean);
  if (words.length) announce(words.join(" "));
}

// The deadline: time left, in words, kept up to date.
function tick() {
  for (const el of document.querySelectorAll("[data-countdown]")) {
    const left = Math.floor((Date.parse(el.dataset.countdown) - Date.now()) / 1000);
    el.textContent = words(left);
  }
}

// As emails/times.py's left_words (one form everywhere): the two largest units that matter, no minutes
// beside days.
function words(seconds) {
  if (seconds <= 0) return "the deadline has passed";
  if (seconds < 60) return "less than a minute left";
  let minutes = Math.floor(seconds / 60);
  const days = Math.floor(minutes / 1440);
  minutes -= days * 1440;
  const hours = Math.floor(minutes / 60);
  minutes -= hours * 60;
  const parts = [[days, "day"], [hours, "hour"], [days ? 0 : minutes, "minute"]]
    .filter(([n]) => n)
    .map(([n, unit]) => `${n} ${unit}${n === 1 ? "" : "s"}`);
  return `${parts.slice(0, 2).join(" ")} left`;
}

// The host's own time zone as the first player's default, on the create-game form.
function localZone(root) {
  const input = root.querySelector("input[data-local-zone]");
  if (!input || (input.value && input.value !== "UTC")) return;
  try {
    input.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch (e) {
    /* keep UTC */
  }
}

// The map's zoom: buttons, and a pinch with two fingers inside the map's box (one finger pans: the box
// scrolls). The zoom is kept per map while the page is swapped by htmx.
const ZOOM_MIN = 1;
const ZOOM_MAX = 4;
const zooms = new Map();

function mapKey(box) {
  const svg = box.querySelector("svg");
  return (svg && svg.querySelector("[id]") ? svg.querySelector("[id]").id.split("-")[0] : "map") + location.pathname;
}

function setZoom(box, zoom, centre) {
  zoom = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, zoom));
  const old = parseFloat(box.style.getPropertyValue("--zoom")) || 1;
  const rect = box.getBoundingClientRect();
  // The point under the centre (or the fingers) stays where it is.
  const cx = centre ? centre.x - rect.left : rect.width / 2;
  const cy = centre ? centre.y - rect.top : rect.height / 2;
  const fx = (box.scrollLeft + cx) / (box.scrollWidth || 1);
  const fy = (box.scrollTop + cy) / (box.scrollHeight || 1);
  box.style.setProperty("--zoom", String(zoom));
  box.scrollLeft = fx * box.scrollWidth - cx;
  box.scrollTop = fy * box.scrollHeight - cy;
  zooms.set(mapKey(box), zoom);
  const frame = box.closest("[data-map-frame]");
  if (frame) {
    const out = frame.querySelector('[data-zoom="out"]');
    const into = frame.querySelector('[data-zoom="in"]');
    if (out) out.disabled = zoom <= ZOOM_MIN;
    if (into) into.disabled = zoom >= ZOOM_MAX;
  }
}

document.addEventListener("click", (event) => {
  const b = event.target.closest && event.target.closest("[data-zoom]");
  if (!b) return;
  const box = b.closest("[data-map-frame]").querySelector("[data-map-scroll]");
  const zoom = parseFloat(box.style.getPropertyValue("--zoom")) || 1;
  setZoom(box, b.dataset.zoom === "in" ? zoom * 1.5 : b.dataset.zoom === "out" ? zoom / 1.5 : 1);
});

const pinch = { pointers: new Map(), box: null, distance: 0, zoom: 1 };
function fingers() {
  const [a, b] = Array.from(pinch.pointers.values());
  return { distance: Math.hypot(a.x - b.x, a.y - b.y), centre: { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 } };
}
document.addEventListener("pointerdown", (event) => {
  const box = event.target.closest && event.target.closest("[data-map-scroll]");
  if (!box || event.pointerType !== "touch") return;
  pinch.pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
  if (pinch.pointers.size === 2) {
    pinch.box = box;
    pinch.distance = fingers().distance;
    pinch.zoom = parseFloat(box.style.getPropertyValue("--zoom")) || 1;
  }
});
document.addEventListener("pointermove", (event) => {
  if (!pinch.pointers.has(event.pointerId)) return;
  pinch.pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
  if (pinch.box && pinch.pointers.size === 2 && pinch.distance > 0) {
    const now = fingers();
    setZoom(pinch.box, (pinch.zoom * now.distance) / pinch.distance, now.centre);
  }
});
for (const type of ["pointerup", "pointercancel"]) {
  document.addEventListener(type, (event) => {
    pinch.pointers.delete(event.pointerId);
    if (pinch.pointers.size < 2) pinch.box = null;
  });
}

function enhanceMaps(root) {
  for (const frame of root.querySelectorAll("[data-map-frame]")) {
    const tools = frame.querySelector("[data-map-tools]");
    if (tools) tools.hidden = false;
    const box = frame.querySelector("[data-map-scroll]");
    const zoom = zooms.get(mapKey(box));
    if (box && zoom && !box.style.getPropertyValue("--zoom")) setZoom(box, zoom);
  }
}

// The phone's sheet (the turn page's actions along the bottom of the screen): its height, for the map above.
function measureSheet() {
  const sheet = document.querySelector("[data-sheet]");
  const fixed = sheet && getComputedStyle(sheet).position === "fixed";
  document.documentElement.style.setProperty("--sheet", fixed ? `${Math.ceil(sheet.getBoundingClientRect().height)}px` : "0px");
}

// The turn page's map opens framed on the player's own regions and those they may conquer (the whole board
// before the first pick), at the zoom where its smallest label is 11 CSS px high at least (issue 35).
const LABEL_MIN = 11;

// The map's words: region numbers, token counts, races, costs (a badge's seat number or "LT" is part of its
// picture, whose shape and colour say the same, as the region's spoken name does).
function smallestLabel(svg) {
  let smallest = Infinity;
  for (const text of svg.querySelectorAll(".labels text")) {
    if (text.closest(".badge")) continue;
    if (!text.getClientRects().length) continue;
    const ctm = text.getScreenCTM();
    if (ctm) smallest = Math.min(smallest, parseFloat(text.getAttribute("font-size")) * ctm.a);
  }
  return smallest;
}

function frameMap(box) {
  const svg = box && box.querySelector("svg.board-map");
  if (!svg) return;
  const framed = Array.from(svg.querySelectorAll("a.region-link[data-frame] path.region"));
  setZoom(box, 1);
  if (!framed.length) return;
  const smallest = smallestLabel(svg);
  if (Number.isFinite(smallest) && smallest < LABEL_MIN) setZoom(box, Math.ceil((LABEL_MIN / smallest) * 20) / 20);
  const rects = framed.map((path) => path.getBoundingClientRect());
  const left = Math.min(...rects.map((r) => r.left));
  const right = Math.max(...rects.map((r) => r.right));
  const top = Math.min(...rects.map((r) => r.top));
  const bottom = Math.max(...rects.map((r) => r.bottom));
  const view = box.getBoundingClientRect();
  const height = Math.min(view.height, innerHeight - view.top);
  box.scrollLeft += (left + right) / 2 - (view.left + view.width / 2);
  box.scrollTop += (top + bottom) / 2 - (view.top + Math.max(height, 0) / 2);
}

// On a phone the turn page opens with the map at the top of the screen and the sheet under it (the turn's
// title and deadline are just above, a flick away).
function mapToTop(box) {
  // Before the pick the combos are what is read: the page opens at its top, the title and deadline first.
  if (document.querySelector("main.phase-pick")) return;
  const frame = box.closest("[data-map-frame]");
  if (!frame || !document.querySelector("[data-sheet]") || getComputedStyle(document.querySelector("[data-sheet]")).position !== "fixed") return;
  window.scrollTo(0, window.scrollY + frame.getBoundingClientRect().top);
}

function ready(root) {
  measureSheet();
  if (!turnMapLinks().some((a) => a.getAttribute("tabindex") === "0")) rovingMap(null);
  enhanceMaps(root);
  enhanceSteppers(root);
  localZone(root);
  tick();
}

document.addEventListener("DOMContentLoaded", () => {
  ready(document);
  const turnMap = document.querySelector(".turn-map [data-map-scroll]");
  if (turnMap && !zooms.has(mapKey(turnMap))) {
    mapToTop(turnMap);
    frameMap(turnMap);
  }
  // A page loaded whole (after a form sent without htmx) that says what the step did: its words first.
  if (!document.getElementById("turn-status") && document.querySelector("#main .messages .message")) {
    showConfirmation({ path: location.pathname });
  }
  announceStatus();
});
document.addEventListener("htmx:afterSettle", () => ready(document));
setInterval(tick, 30000);
addEventListener("resize", measureSheet);

// -- the map by keyboard (issue 35) ---------------------------------------------------------------------------
// The turn page's map is one tab stop: the arrow keys move between its regions (to the nearest region's
// centre in that direction), Home and End to the first and last; Enter acts as a tap does. The region that
// has the focus is ringed in black and white, which stands out at 3:1 or more on every terrain and outline.
const FOCUS_RING_OUTER = "#000000";
const FOCUS_RING_INNER = "#FFFFFF";

function turnMapLinks() {
  return Array.from(document.querySelectorAll(".turn-map a.region-link"));
}

function makeTabStop(link) {
  for (const other of turnMapLinks()) other.setAttribute("tabindex", other === link ? "0" : "-1");
}

function rovingMap(previous) {
  const links = turnMapLinks();
  if (!links.length) return null;
  const stop =
    (previous !== undefined && previous !== null && links.find((a) => a.dataset.region === String(previous))) ||
    links.find((a) => a.dataset.action || a.closest("svg").querySelector(`[data-labels="${a.dataset.region}"] .cost`)) ||
    links.find((a) => a.dataset.redeploy) ||
    links[0];
  makeTabStop(stop);
  return stop;
}

function centre(link) {
  const box = link.querySelector("path.region").getBBox();
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

function regionTowards(link, key) {
  const links = turnMapLinks();
  if (key === "Home") return links[0];
  if (key === "End") return links[links.length - 1];
  const [dx, dy] = { ArrowRight: [1, 0], ArrowLeft: [-1, 0], ArrowDown: [0, 1], ArrowUp: [0, -1] }[key];
  const from = centre(link);
  let best = null;
  let bestCost = Infinity;
  for (const other of links) {
    if (other === link) continue;
    const to = centre(other);
    const along = (to.x - from.x) * dx + (to.y - from.y) * dy;
    const across = Math.abs((to.x - from.x) * dy + (to.y - from.y) * dx);
    if (along <= 0 || across > along * 1.5) continue; // within about 56° either side of the arrow
    const cost = along + 2 * across;
    if (cost < bestCost) {
      best = other;
      bestCost = cost;
    }
  }
  return best;
}

document.addEventListener("keydown", (event) => {
  const link = event.target.closest && event.target.closest(".turn-map a.region-link");
  if (!link || event.altKey || event.ctrlKey || event.metaKey) return;
  if (event.key === " ") {
    event.preventDefault();
    link.click();
    return;
  }
  if (!["ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp", "Home", "End"].includes(event.key)) return;
  event.preventDefault();
  const next = regionTowards(link, event.key);
  if (!next) return;
  makeTabStop(next);
  next.focus({ preventScroll: true });
  showInBox(next);
});

// The focused region in view inside the map's box (zoomed in, it scrolls).
function showInBox(link) {
  const box = link.closest("[data-map-scroll]");
  if (!box) return;
  const r = link.getBoundingClientRect();
  const b = box.getBoundingClientRect();
  const bottom = Math.min(b.bottom, innerHeight - (parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--sheet")) || 0));
  const cx = r.left + r.width / 2;
  const cy = r.top + r.height / 2;
  if (cx < b.left + 20 || cx > b.right - 20) box.scrollLeft += cx - (b.left + b.width / 2);
  if (cy < b.top + 20 || cy > bottom - 20) box.scrollTop += cy - (b.top + (bottom - b.top) / 2);
}

document.addEventListener("focusin", (event) => {
  const link = event.target.closest && event.target.closest(".turn-map a.region-link");
  if (link) {
    makeTabStop(link);
    drawRing(link);
  }
});
document.addEventListener("focusout", (event) => {
  if (event.target.closest && event.target.closest(".turn-map a.region-link")) drawRing(null);
});

function drawRing(link) {
  for (const old of document.querySelectorAll(".board-map .focus-ring")) old.remove();
  if (!link || !link.matches(":focus-visible")) return;
  const path = link.querySelector("path.region");
  const layer = link.closest("svg").querySelector(".highlights");
  if (!path || !layer) return;
  const ns = "http://www.w3.org/2000/svg";
  const ring = document.createElementNS(ns, "g");
  ring.setAttribute("class", "focus-ring");
  for (const [colour, width] of [[FOCUS_RING_OUTER, 12], [FOCUS_RING_INNER, 5]]) {
    const line = document.createElementNS(ns, "path");
    line.setAttribute("d", path.getAttribute("d"));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", colour);
    line.setAttribute("stroke-width", String(width));
    line.setAttribute("stroke-linejoin", "round");
    ring.append(line);
  }
  layer.append(ring);
}

// After each step the focus goes where the next action is (issue 35): the map during the conquests (the
// region last acted on, or the first one to conquer), the redeployment's Save button, then "End turn…".
// The live region still says the step's result and the next step.
// The page says which (turn.py's next_action).
function nextAction(step) {
  const status = document.getElementById("turn-status");
  const next = status && status.dataset.nextAction;
  if (next === "pick") return document.querySelector("#main .combo button:not([disabled])");
  if (next === "map") return rovingMap(step && step.region);
  if (next === "save") return document.querySelector("#main form.redeploy button[type=submit]");
  if (next === "end_turn") return document.querySelector("#main form:has(input[name=confirm][value=end_turn]) button");
  return null;
}

// Skip links (the turn page): to the map (its region with the focus) and to the actions (the next one).
document.addEventListener("click", (event) => {
  const skip = event.target.closest && event.target.closest("a[data-skip]");
  if (!skip) return;
  const target =
    skip.dataset.skip === "map"
      ? turnMapLinks().find((a) => a.getAttribute("tabindex") === "0") || rovingMap()
      : nextAction(null) && !nextAction(null).closest(".turn-map") ? nextAction(null) : document.getElementById("turn-status");
  if (!target) return;
  event.preventDefault();
  target.focus();
  if (target.closest(".turn-map")) showInBox(target);
});
