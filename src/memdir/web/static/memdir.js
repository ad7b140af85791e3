// memdir's page works without this file; it only adds comfort: "/" focuses search, dangerous forms ask first.
"use strict";
document.addEventListener("keydown", (event) => {
  const t = event.target;
  const typing = t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
    const box = document.getElementById("q");
    if (box) { event.preventDefault(); box.focus(); box.select(); }
  }
});
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) { event.preventDefault(); }
});
