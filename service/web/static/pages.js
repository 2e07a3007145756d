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

document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest("a.region-link");
  if (!link) return;
  fromMap = true;
  if (link.dataset.redeploy) {
    event.preventDefault();
    redeployTap(link);
    return;
  }
  const form = document.getElementById("map-form");
  if (!link.dataset.action || !form) return;
  event.preventDefault();
  form.elements.type.value = link.dataset.action;
  form.elements.region.value = link.dataset.region;
  form.elements.troop.value = link.dataset.troop || "";
  form.requestSubmit();
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
    x: window.scrollX,
    y: window.scrollY,
    map: box ? { left: box.scrollLeft, top: box.scrollTop, zoom: box.style.getPropertyValue("--zoom") } : null,
    fromMap,
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
  const status = document.getElementById("turn-status");
  if (status) {
    // After a tap on the map the page stays where it is; after a step from the panel the status is shown.
    status.focus({ preventScroll: Boolean(step && step.fromMap && step.path === location.pathname) });
  } else {
    const main = document.getElementById("main");
    if (main) main.focus({ preventScroll: true });
  }
  announceStatus();
});

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

function ready(root) {
  enhanceMaps(root);
  enhanceSteppers(root);
  localZone(root);
  tick();
}

document.addEventListener("DOMContentLoaded", () => {
  ready(document);
  announceStatus();
});
document.addEventListener("htmx:afterSettle", () => ready(document));
setInterval(tick, 30000);
