// spacy-siamese displacy: the served page's script. The server renders every piece of HTML it
// inserts (escaped there); the forms also work without this script, by reloading the page.
(() => {
  "use strict";
  const byId = (id) => document.getElementById(id);
  const status = byId("ss-status");

  function say(message, isError) {
    if (!status) return;
    status.textContent = message;
    status.classList.toggle("ss-error", Boolean(isError));
  }

  async function fetchJSON(url, init) {
    const response = await fetch(url, init);
    let data = null;
    try {
      data = await response.json();
    } catch (err) {
      throw new Error(`${response.status} ${response.statusText}`);
    }
    if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
    return data;
  }

  const pairForm = byId("ss-pair-form");
  if (pairForm) {
    pairForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const params = new URLSearchParams(new FormData(pairForm));
      say("Comparing…");
      try {
        const data = await fetchJSON("api/explain", { method: "POST", body: params });
        byId("ss-pair-result").innerHTML = data.html;
        say("");
        history.replaceState(null, "", `pair?${params}`);
      } catch (err) {
        say(err.message, true);
      }
    });
  }

  const searchForm = byId("ss-search-form");
  if (searchForm) {
    const results = byId("ss-search-results");
    let latest = 0;
    let timer = null;
    const search = async () => {
      const params = new URLSearchParams(new FormData(searchForm));
      const ticket = ++latest;
      if (!params.get("q").trim()) {
        results.innerHTML = "";
        say("");
        return;
      }
      say("Searching…");
      try {
        const data = await fetchJSON(`api/search?${params}`);
        if (ticket !== latest) return; // a newer query was sent meanwhile
        results.innerHTML = data.html;
        say("");
        history.replaceState(null, "", `search?${params}`);
      } catch (err) {
        if (ticket === latest) say(err.message, true);
      }
    };
    searchForm.addEventListener("submit", (event) => {
      event.preventDefault();
      clearTimeout(timer);
      search();
    });
    searchForm.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(search, 250);
    });
  }
})();
