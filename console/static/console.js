// The console's only script: live refresh of the workflows list and of one workflow, and
// keyboard movement between the tasks of the inbox. No framework, no network but this server.
"use strict";

function refreshRows() {
  const rows = document.getElementById("rows");
  const live = document.getElementById("live");
  if (!rows) return;
  setInterval(async () => {
    if (live && !live.checked) return;
    const response = await fetch(rows.dataset.refresh, { headers: { "X-Console-Refresh": "1" } });
    if (response.ok) rows.innerHTML = await response.text();
  }, 5000);
}

function followWorkflow() {
  const article = document.querySelector("article.workflow[data-poll]");
  if (!article) return;
  setInterval(async () => {
    const response = await fetch(article.dataset.poll, { headers: { Accept: "application/json" } });
    if (!response.ok) return;
    const current = await response.json();
    if (String(current.version) !== article.dataset.version) window.location.reload();
  }, 1500);
}

function inboxKeys() {
  const inbox = document.getElementById("inbox");
  if (!inbox) return;
  inbox.addEventListener("keydown", (event) => {
    if (event.target.closest("form")) return; // typing a reason, or on a button
    const tasks = Array.from(inbox.querySelectorAll("article.task"));
    const at = tasks.indexOf(event.target.closest("article.task"));
    const step = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 }[event.key];
    if (step === undefined || tasks.length === 0) return;
    event.preventDefault();
    tasks[Math.min(tasks.length - 1, Math.max(0, at + step))].focus();
  });
}

document.addEventListener("DOMContentLoaded", () => {
  refreshRows();
  followWorkflow();
  inboxKeys();
});
