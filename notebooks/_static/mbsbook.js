// The sidebar and contents toggles. pydata-sphinx-theme and sphinx-book-theme both bind their
// handlers to the FIRST .primary-toggle / .secondary-toggle of the page, which in
// sphinx-book-theme's layout is a hidden navbar icon, so the visible buttons did nothing. Each
// visible toggle forwards its click to the first one of its kind, whose handlers then open the
// sidebar (as a dialog on narrow screens) or collapse it (on wide screens).
document.addEventListener("DOMContentLoaded", function () {
  [".primary-toggle", ".secondary-toggle"].forEach(function (selector) {
    var buttons = document.querySelectorAll(selector);
    for (var i = 1; i < buttons.length; i++) {
      buttons[i].addEventListener("click", function (event) {
        event.preventDefault();
        event.stopPropagation();
        buttons[0].click();
      });
    }
  });
});

// The scorecard's chapter tables: a filter bar above the first one shows only the rows of one
// kind of evidence and/or containing a text (claim, figure, status, note), with a count.
document.addEventListener("DOMContentLoaded", function () {
  var tables = document.querySelectorAll("table.scorecard.rows");
  if (!tables.length) return;
  var bar = document.createElement("div");
  bar.className = "scorecard-filter";
  bar.innerHTML = '<label>kind <select><option value="">all</option>' +
    '<option>paper\'s claim</option><option>vs independent reference</option>' +
    '<option>timing on this machine</option><option>discrepancy</option></select></label> ' +
    '<label>text <input type="search" placeholder="e.g. Fig. 7, EP, FAILED"></label> <output></output>';
  var section = tables[0].closest("section");
  section.parentNode.insertBefore(bar, section);
  var kind = bar.querySelector("select"), text = bar.querySelector("input"), count = bar.querySelector("output");
  function apply() {
    var shown = 0, total = 0, needle = text.value.trim().toLowerCase();
    tables.forEach(function (table) {
      var visible = 0;
      table.querySelectorAll("tbody tr").forEach(function (row) {
        var cells = row.querySelectorAll("td");
        var ok = (!kind.value || cells[2].textContent.trim() === kind.value) &&
                 (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0);
        row.hidden = !ok;
        total += 1;
        if (ok) { shown += 1; visible += 1; }
      });
      table.closest("section").hidden = visible === 0;
    });
    count.textContent = shown + " of " + total + " rows";
  }
  kind.addEventListener("change", apply);
  text.addEventListener("input", apply);
  apply();
});
