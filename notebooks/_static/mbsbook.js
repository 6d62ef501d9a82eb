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
