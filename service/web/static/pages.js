// Small World by Mail: the little the pages do with JavaScript. Everything works without it; this makes
// the map clickable in one step, the redeploy inputs into steppers with a running total, and the deadline
// tick. Loaded once; the handlers are delegated, so pages swapped in by htmx need nothing more.
"use strict";

// A click on a region that offers one plain conquest submits it at once (the map form on the turn page).
// Regions with other choices keep their link to the region's panel.
document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest("a.region-link[data-action]");
  const form = document.getElementById("map-form");
  if (!link || !form) return;
  event.preventDefault();
  form.elements.type.value = link.dataset.action;
  form.elements.region.value = link.dataset.region;
  form.elements.troop.value = link.dataset.troop || "";
  form.requestSubmit();
});

// On the redeploy phase the map's regions link to their input: focus it.
document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest('a.region-link[href^="#tokens-"]');
  if (!link) return;
  const input = document.getElementById(link.getAttribute("href").slice(1));
  if (!input) return;
  event.preventDefault();
  input.scrollIntoView({ block: "center" });
  input.focus();
  input.select();
});

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
  const max = parseInt(input.max || "999", 10);
  input.value = String(Math.min(max, Math.max(min, value)));
  input.dispatchEvent(new Event("input", { bubbles: true }));
});

document.addEventListener("input", (event) => {
  const form = event.target.closest && event.target.closest("form.redeploy");
  if (form) updatePlaced(form);
});

function updatePlaced(form) {
  const out = form.querySelector("[data-placed]");
  if (!out) return;
  let total = 0;
  for (const input of form.querySelectorAll("input[type=number]")) total += parseInt(input.value, 10) || 0;
  out.textContent = String(total);
  const count = parseInt(form.dataset.count, 10);
  out.parentElement.classList.toggle("wrong", total !== count);
}

// Messages floating over the map on small screens go away when tapped.
document.addEventListener("click", (event) => {
  const box = event.target.closest && event.target.closest(".turn-page .messages");
  if (box) box.classList.add("dismissed");
});

// After a step sent from the actions panel, show the panel again if it scrolled out of view (a pick on a
// phone leaves the player far below it). A step made on the map keeps the map where it is.
let fromActions = false;
document.addEventListener("htmx:beforeRequest", (event) => {
  fromActions = Boolean(event.target.closest && event.target.closest(".turn-actions"));
});
document.addEventListener("htmx:afterSettle", () => {
  const actions = document.getElementById("actions");
  if (fromActions && actions && actions.getBoundingClientRect().top < 0) actions.scrollIntoView({ block: "start" });
  fromActions = false;
});

// The deadline: time left, in words, kept up to date.
function tick() {
  for (const el of document.querySelectorAll("[data-countdown]")) {
    const left = Math.floor((Date.parse(el.dataset.countdown) - Date.now()) / 1000);
    el.textContent = words(left);
  }
}

// As emails/times.py's time_left: the two largest units that matter, no minutes beside days.
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

function ready(root) {
  enhanceSteppers(root);
  localZone(root);
  tick();
}

document.addEventListener("DOMContentLoaded", () => ready(document));
document.addEventListener("htmx:afterSettle", () => ready(document));
setInterval(tick, 30000);
