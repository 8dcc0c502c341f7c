"""Build ``sarg_integrations/data/direction_queries.jsonl`` (the direction-classifier data).

Deterministic (seed 13): hand-written queries plus template expansion over per-domain
vocabularies. Labels follow the rules in ``sarg_integrations/data/direction_queries.md``.
Re-run with ``python benchmarks/data/make_direction_queries.py``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SEED = 13
PER_CLASS = 700
OUT = Path(__file__).resolve().parents[2] / "sarg_integrations" / "data" / "direction_queries.jsonl"

# Event noun phrases per domain: each can be a cause or an effect; the label comes from
# the template, never from the phrase.
EVENTS: dict[str, list[str]] = {
    "medicine": [
        "a mutation in the GBA1 gene",
        "chronic hypertension",
        "insulin resistance",
        "vitamin D deficiency",
        "antibiotic overuse",
        "long-term steroid use",
        "sleep deprivation",
        "a high-salt diet",
        "smoking",
        "obesity",
        "kidney failure",
        "liver cirrhosis",
        "type 2 diabetes",
        "atrial fibrillation",
        "chronic inflammation",
        "a CFTR mutation",
        "untreated strep throat",
        "iron deficiency anemia",
        "elevated LDL cholesterol",
        "opioid tolerance",
        "sepsis",
        "the measles outbreak in Samoa",
        "Gaucher disease",
        "splenomegaly",
        "antimicrobial resistance in hospitals",
    ],
    "finance": [
        "persistent inflation",
        "the Federal Reserve's rate hikes",
        "a sell-off in technology stocks",
        "rising bond yields",
        "a weaker dollar",
        "the collapse of Lehman Brothers",
        "a liquidity crunch",
        "margin calls",
        "falling consumer confidence",
        "a housing bubble",
        "the 2023 regional bank failures",
        "higher mortgage rates",
        "a credit downgrade",
        "quantitative tightening",
        "currency devaluation",
        "a surge in oil prices",
        "record corporate buybacks",
        "the inverted yield curve",
        "a run on deposits",
        "wage growth",
        "the tariff increase on steel imports",
        "a drop in retail sales",
    ],
    "engineering": [
        "metal fatigue in the wing spar",
        "a voltage spike",
        "corrosion of the rebar",
        "thermal expansion of the rails",
        "a memory leak in the server",
        "bearing wear",
        "overheating of the battery pack",
        "a cracked turbine blade",
        "soil liquefaction",
        "a firmware bug",
        "the bridge resonance",
        "packet loss on the network",
        "a clogged fuel injector",
        "excessive vibration in the pump",
        "the power outage",
        "a software deadlock",
        "cavitation in the propeller",
        "the O-ring failure on Challenger",
        "latency spikes in the database",
        "a short circuit",
        "poor weld quality",
    ],
    "history": [
        "the fall of the Western Roman Empire",
        "the assassination of Archduke Franz Ferdinand",
        "the Treaty of Versailles",
        "the Black Death",
        "the French Revolution",
        "the invention of the printing press",
        "the Great Depression",
        "the collapse of the Soviet Union",
        "the partition of India",
        "the Meiji Restoration",
        "the Dust Bowl",
        "the Protestant Reformation",
        "the Congress of Vienna",
        "the fall of Constantinople",
        "the Industrial Revolution in Britain",
        "the Cuban Missile Crisis",
        "the abolition of the slave trade",
        "the Opium Wars",
        "the end of the Bretton Woods system",
        "the Irish potato famine",
    ],
    "law": [
        "the Brown v. Board of Education ruling",
        "a breach of contract",
        "the repeal of the statute",
        "the GDPR coming into force",
        "a mistrial",
        "the antitrust lawsuit against the company",
        "stricter sentencing guidelines",
        "the new tenant protection law",
        "a patent infringement claim",
        "the Supreme Court's decision in Citizens United",
        "the privacy regulation",
        "a wrongful dismissal",
        "the zoning change",
        "the landlord's eviction notice",
        "non-compliance with the safety code",
        "the plea bargain",
        "the loss of the appeal",
        "the ban on non-compete clauses",
    ],
    "ecology": [
        "deforestation in the Amazon",
        "ocean acidification",
        "the decline of bee populations",
        "the reintroduction of wolves to Yellowstone",
        "coral bleaching",
        "an algal bloom",
        "overfishing of cod",
        "invasive zebra mussels",
        "rising sea temperatures",
        "habitat fragmentation",
        "the loss of sea ice",
        "soil erosion",
        "pesticide runoff",
        "the drought in the Sahel",
        "wildfire frequency",
        "the collapse of the krill population",
        "nitrogen pollution",
        "melting permafrost",
        "the spread of cane toads in Australia",
        "urban heat islands",
    ],
    "everyday": [
        "skipping breakfast",
        "a dead car battery",
        "the missed flight",
        "a leaking pipe",
        "too much screen time before bed",
        "my phone battery draining fast",
        "the power bill doubling",
        "the moldy bathroom ceiling",
        "the wifi dropping every evening",
        "a late rent payment",
        "drinking coffee late at night",
        "the sourdough not rising",
        "the houseplant's yellow leaves",
        "a flat tire",
        "the kids' falling grades",
        "the noisy neighbours",
        "missing the bus",
        "a burnt-out team",
        "the dog barking at night",
        "the clogged kitchen drain",
    ],
    "technology": [
        "the outage of the cloud provider",
        "a data breach",
        "the shift to remote work",
        "the adoption of generative AI",
        "a chip shortage",
        "the app's slow load times",
        "the recommendation algorithm change",
        "the spread of misinformation online",
        "the rise in ransomware attacks",
        "the drop in user engagement",
        "the API deprecation",
    ],
}

TARGETS: dict[str, list[str]] = {
    "medicine": [
        "the patient's bones",
        "life expectancy",
        "the immune system",
        "hospital admissions",
        "the kidneys",
    ],
    "finance": [
        "small businesses",
        "pension funds",
        "the housing market",
        "emerging markets",
        "household savings",
    ],
    "engineering": [
        "the structure's lifetime",
        "system reliability",
        "the production line",
        "maintenance costs",
    ],
    "history": ["European borders", "the balance of power", "the working class", "world trade"],
    "law": ["small landlords", "employers", "future cases", "consumer rights"],
    "ecology": ["the food web", "local fisheries", "biodiversity", "the carbon cycle", "farmers"],
    "everyday": ["my sleep", "the family budget", "my mood", "the commute"],
    "technology": ["customer trust", "the company's revenue", "developers", "online safety"],
}

FORWARD = [
    "What does {x} lead to?",
    "What does {x} ultimately lead to?",
    "What does {x} eventually result in?",
    "What are the consequences of {x}?",
    "What are the effects of {x}?",
    "What are the downstream effects of {x}?",
    "What happens if {x} continues?",
    "What happens after {x}?",
    "What would happen if {x} got worse?",
    "What could {x} trigger?",
    "What will {x} result in?",
    "What is {x} likely to cause?",
    "Which problems can {x} give rise to?",
    "What might follow from {x}?",
    "What knock-on effects does {x} have?",
    "How will {x} affect {t}?",
    "What impact does {x} have on {t}?",
    "What would {x} mean for {t}?",
    "What does {x} do to {t}?",
    "What are the long-term outcomes of {x}?",
    "Where does {x} eventually lead?",
    "Predict the impact of {x}.",
    "Tell me what {x} sets in motion.",
    "What chain of events does {x} start?",
    "If {x} happens, what follows?",
    "What risks does {x} create?",
    "Walk me through the effects of {x}.",
    "What are the implications of {x} for {t}?",
    "what comes next after {x}",
    "effects of {x} on {t}?",
    "What did {x} lead to?",
    "What did {x} cause downstream?",
    "What were the consequences of {x}?",
    "How did {x} change {t}?",
    "What did {x} bring about?",
    # The past of "What does {x} do to {t}?": without it, "What did the marine heatwave
    # do to fishing in Palu bay?" read as the backward "What did {s} do to be {passive}?".
    "What did {x} do to {t}?",
    "What has {x} done to {t}?",
    "How did {x} affect {t}?",
    "Once {x} sets in, what happens next?",
    "What is the end result of {x}?",
    "Which outcomes should we expect from {x}?",
    "What side effects can {x} produce?",
    "In what ways does {x} spread to {t}?",
]
BACKWARD = [
    "Why did {x} happen?",
    "Why is {x} happening?",
    "What caused {x}?",
    "What causes {x}?",
    "What are the root causes of {x}?",
    "What explains {x}?",
    "What led to {x}?",
    "How did {x} come about?",
    "What is behind {x}?",
    "What triggered {x}?",
    "Which factors contributed to {x}?",
    "Where does {x} come from?",
    "What is the origin of {x}?",
    "What was responsible for {x}?",
    "What made {x} possible?",
    "What drives {x}?",
    "What are the underlying reasons for {x}?",
    "Trace {x} back to its source.",
    "How can {x} be explained?",
    "What conditions give rise to {x}?",
    "Why do we see {x}?",
    "What gave rise to {x}?",
    "What set off {x}?",
    "What is the reason for {x}?",
    "what's behind {x}",
    "Why has {x} gotten worse?",
    "What factors explain {x}?",
    "What preceded and caused {x}?",
    "Due to what did {x} occur?",
    "What is {x} a result of?",
    "What is {x} a symptom of?",
    "What brought about {x}?",
    "Why would {x} occur in the first place?",
    "What were the causes of {x}?",
    "Diagnose the cause of {x}.",
    "What is the mechanism that produces {x}?",
    "Whom or what can we blame for {x}?",
    "What is the source of {x}?",
    "What leads to {x}?",
    "{X} - why?",
]
BIDIRECTIONAL = [
    "How are {x} and {y} related?",
    "What is the connection between {x} and {y}?",
    "How does {x} relate to {y}?",
    "Is there a link between {x} and {y}?",
    "What links {x} to {y}?",
    "Explain the relationship between {x} and {y}.",
    "How do {x} and {y} interact?",
    "What do {x} and {y} have in common?",
    "Compare {x} and {y}.",
    "How is {x} connected to {y}?",
    "What is the pathway linking {x} and {y}?",
    "How are {x} and {y} tied together?",
    "Are {x} and {y} connected?",
    "What is the relationship between {x} and {y}?",
    "{X} versus {y}: how do they differ?",
    "What role does {x} play in relation to {y}?",
    "Map the connections between {x} and {y}.",
    "How do {x} and {y} influence each other?",
    "Is {x} associated with {y}?",
    "What mechanism connects {x} with {y}?",
]

# News-style questions name a whole clause, not a noun phrase ("Why did the king arrive
# in Lisbon?", "What happened after shares plunged?"); the frame still decides the label.
# Each clause: (subject, base verb phrase, past, -ing form, passive participle phrase).
CLAUSES = [
    ("the city council", "raise parking fees", "raised parking fees", "raising parking fees", "criticised"),
    ("the central bank", "cut its lending rate", "cut its lending rate", "cutting its lending rate", "overruled"),
    ("the dock workers", "call a strike", "called a strike", "calling a strike", "locked out"),
    ("the farmers", "abandon their fields", "abandoned their fields", "abandoning their fields", "compensated"),
    ("the finance minister", "resign", "resigned", "resigning", "dismissed"),
    ("the river", "burst its banks", "burst its banks", "bursting its banks", "dammed"),
    ("the carmaker", "recall its trucks", "recalled its trucks", "recalling its trucks", "fined"),
    ("the troops", "withdraw from the border", "withdrew from the border", "withdrawing from the border", "redeployed"),
    ("the Duke of Arlen", "arrive in Lisbon", "arrived in Lisbon", "arriving in Lisbon", "welcomed in Lisbon"),
    ("the patients", "stay longer in hospital", "stayed longer in hospital", "staying longer in hospital", "moved to another ward"),
    ("share prices", "fall sharply", "fell sharply", "falling sharply", "propped up"),
    ("the airline", "cancel its flights", "cancelled its flights", "cancelling its flights", "grounded"),
    ("the police", "close the main road", "closed the main road", "closing the main road", "called to the square"),
    ("the appeals court", "overturn the verdict", "overturned the verdict", "overturning the verdict", "asked to rule again"),
    ("Halvorsen Steel", "shut its smelter", "shut its smelter", "shutting its smelter", "taken over"),
    ("the president", "veto the budget", "vetoed the budget", "vetoing the budget", "impeached"),
    ("the protesters", "block the highway", "blocked the highway", "blocking the highway", "dispersed"),
    ("the national team", "lose the final", "lost the final", "losing the final", "disqualified"),
    ("Prime Minister Okafor", "call early elections", "called early elections", "calling early elections", "voted out"),
    ("the hospital", "turn away patients", "turned away patients", "turning away patients", "put under review"),
    ("the refinery", "stop deliveries", "stopped deliveries", "stopping deliveries", "evacuated"),
    ("the opposition party", "boycott the vote", "boycotted the vote", "boycotting the vote", "banned"),
    ("the villagers", "leave their homes", "left their homes", "leaving their homes", "relocated"),
    ("the museum", "close early", "closed early", "closing early", "sold"),
    ("the software update", "crash the servers", "crashed the servers", "crashing the servers", "rolled back"),
    ("the peacekeeping force", "expand its patrols", "expanded its patrols", "expanding its patrols", "reinforced"),
    ("the insurer", "raise premiums", "raised premiums", "raising premiums", "sued"),
    ("the mayor", "ban the rally", "banned the rally", "banning the rally", "arrested"),
    ("the coral reef", "lose its colour", "lost its colour", "losing its colour", "protected"),
    ("wheat prices", "double", "doubled", "doubling", "capped"),
]
FORWARD_CLAUSE = [
    "What happened after {s} {past}?",
    "What happened when {s} {past}?",
    "What would happen if {s} {past}?",
    "What may happen if {s} {past}?",
    "What was the result of {s} {ing}?",
    "What resulted from {s} {ing}?",
    "What came of {s} {ing}?",
    "What did {s} {ing} lead to?",
    "What could be expected to happen after {s} {past}?",
    "What will {s} {ing} do to {t}?",
    "What did {s} {ing} do to {t}?",
    "What is likely to follow if {s} {past}?",
    "What did {s} {base} set off?",
    "What was the result of {x}?",
    "What resulted from {x}?",
    "What could be expected to happen after {x}?",
    "What might occur after {x}?",
]
BACKWARD_CLAUSE = [
    "Why did {s} {base}?",
    "Why was {s} {passive}?",
    "Why will {s} likely {base}?",
    "Why does {s} want to {base}?",
    "Why had {s} {past}?",
    "What caused {s} to {base}?",
    "What made {s} {base}?",
    "What led {s} to {base}?",
    "What prompted {s} to {base}?",
    "What led to {s} {ing}?",
    "What will lead to {s} {ing}?",
    "What did {s} do to be {passive}?",
    "How did {s} come to {base}?",
    "What contributed to {x}?",
    "What might have contributed to {x}?",
    "What will lead to {x}?",
]
# The same clauses under frames that ask for neither causes nor effects.
NEUTRAL_CLAUSE = [
    "When did {s} {base}?",
    "Where did {s} {base}?",
    "In which year did {s} {base}?",
    "Who announced that {s} {past}?",
    "How many times has {s} been {passive}?",
    "Which newspaper reported that {s} {past}?",
]
CLAUSE_SHARE = {"forward": 0.35, "backward": 0.35, "bidirectional": 0.12}


def _clause_query(rng: random.Random, label: str, x: str, t: str) -> str:
    subject, base, past, ing, passive = rng.choice(CLAUSES)
    frames = {"forward": FORWARD_CLAUSE, "backward": BACKWARD_CLAUSE, "bidirectional": NEUTRAL_CLAUSE}
    template = rng.choice(frames[label])
    query = template.format(s=subject, base=base, past=past, ing=ing, passive=passive, x=x, t=t)
    return query[0].upper() + query[1:]


# Multi-hop factoid bridge and comparison questions (HotpotQA / MuSiQue / 2Wiki style).
# Invented or generic fillers so no real evaluation question is reproduced.
PEOPLE = [
    "Marguerite Delacroix",
    "Tomas Lindqvist",
    "Aiko Tanabe",
    "Rafael Ortega",
    "Helen Whitcombe",
    "Dmitri Volkov",
    "Grace Okafor",
    "Pieter van Dijk",
    "Lucia Ferraro",
    "Samuel Adeyemi",
    "Ingrid Solberg",
    "Chen Wei",
    "Amara Nwosu",
    "Jonas Brandt",
    "Priya Raman",
    "Oliver Hastings",
]
WORKS = [
    "The Silent Harbor",
    "Winter in Lisbon",
    "Glass Orchard",
    "The Last Cartographer",
    "Northbound",
    "A Song for Tallis",
    "Iron Meadows",
    "The Copper Bell",
    "Echoes of Arden",
    "Blue Caravan",
]
ORGS = [
    "Halvorsen Motors",
    "the Brightwater Observatory",
    "Meridian Records",
    "the Kestrel Group",
    "Ashford University",
    "the Tidewater Rangers",
    "Norland Airlines",
    "the Valemont Orchestra",
    "Crestline Pharmaceuticals",
    "the Oakridge Institute",
]
PLACES = [
    "Port Elsmere",
    "the Harrow Valley",
    "Lake Minnow",
    "Castellane",
    "the Dunmore Peninsula",
    "Velden",
    "the Kessel river",
    "Saint-Aubin-sur-Mer",
    "Northgate County",
    "Ostrava",
]
ROLES = [
    "director",
    "author",
    "founder",
    "lead singer",
    "architect",
    "producer",
    "composer",
    "coach",
    "spouse",
    "father",
    "mother",
]
ATTRS = [
    "In which city was the {r} of {w} born?",
    "What nationality is the {r} of {w}?",
    "Which university did the {r} of {w} attend?",
    "When did the {r} of {w} die?",
    "What government position was held by the actor who starred in {w}?",
    "Which award did the {r} of {w} win first?",
    "Who is the spouse of the {r} of {w}?",
    "What language is spoken in the country where {w} was filmed?",
    "Which team did the player who founded {o} play for?",
    "What year was the company that owns {o} founded?",
    "Who succeeded the person who founded {o}?",
    "In what county is the town where {p} grew up?",
    "What is the capital of the region where {o} is headquartered?",
    "Which river flows through the city where {p} was born?",
    "The {r} of {w} was born in which country?",
    "Who is the child of the {r} of {w}?",
    "What instrument did the {r} of {w} play?",
    "Which label released the album by the band {p} joined in 1998?",
    "Who founded the organization that publishes {w}?",
    "What is the population of the city where {o} is based?",
    "Where did the {r} of {w} study?",
    "Which war did the grandfather of {p} fight in?",
    "{p} worked for which company before joining {o}?",
    "The performer of {w} is a member of what group?",
    "When was the founder of {o} born?",
    "What sport does the club based in {l} play?",
    "Who was the head of state of the country that contains {l} in 1950?",
    "What body of water borders the district where {l} is located?",
]
COMPARE = [
    "Were {p} and {q} of the same nationality?",
    "Who was born first, {p} or {q}?",
    "Which was founded earlier, {o} or {o2}?",
    "Are {w} and {w2} both films by the same director?",
    "Who died later, {p} or {q}?",
    "Which is larger, {l} or {l2}?",
    "Do {p} and {q} share the same profession?",
    "Which film came out first, {w} or {w2}?",
    "Are {o} and {o2} located in the same country?",
    "Who is older, {p} or {q}?",
    "Did {p} and {q} attend the same university?",
    "Which of {w} and {w2} has more awards?",
]

HAND = {
    "forward": [
        "What does a GBA1 mutation ultimately lead to?",
        "If interest rates stay high for two more years, what happens to startups?",
        "What happens to the ecosystem when wolves return?",
        "What follows from losing the appeal?",
        "I stopped watering the lawn; what will that do?",
        "What does this bug break downstream?",
        "Where will this policy take us?",
        "So the pump is cavitating - what next?",
        "What will happen if I skip my blood pressure pills?",
        "What does a 1% rise in yields do to stock valuations?",
        "What are the after-effects of a concussion?",
        "Once the dam fails, what happens downstream?",
        "What does melting permafrost set off?",
        "What would a general strike lead to in France?",
        "Follow the consequences of the Suez Canal blockage.",
        "What will the new tariff do to car prices?",
        "What does chronic stress do to the body over time?",
        "What did the printing press make possible?",
        "Consequences?",
        "what happens if the fed cuts rates",
    ],
    "backward": [
        "Why did technology stocks sell off?",
        "Why is my basil wilting?",
        "Why did Rome fall?",
        "What made the Titanic sink?",
        "Why does my laptop overheat?",
        "How did the 2008 crisis start?",
        "Why did the bridge collapse?",
        "Why are coral reefs dying?",
        "Why did the defendant lose?",
        "What is causing the rash on my arm?",
        "Why do bond prices fall when rates rise?",
        "Why did the build fail this morning?",
        "What's the reason my bread is dense?",
        "Why did the Soviet Union collapse?",
        "Why is the river so low this year?",
        "Root cause of the outage?",
        "why did my flight get cancelled",
        "Why are bees disappearing?",
        "What started the Great Fire of London?",
        "How did antibiotic resistance develop?",
    ],
    "bidirectional": [
        "How are inflation and margin calls connected?",
        "What government position was held by the woman who portrayed Corliss Archer?",
        "How is smoking linked to heart disease?",
        "What connects the Black Death and the rise of wages?",
        "Who was born first, the composer of the opera or its librettist?",
        "Relationship between sleep and memory?",
        "How do deforestation and rainfall interact?",
        "Which country is the director of Parasite from?",
        "How are the Treaty of Versailles and World War II related?",
        "What links GDPR to data breach fines?",
        "Is coffee consumption associated with liver health?",
        "sleep vs exercise: how do they relate to mood",
        "What is the connection between the gut microbiome and depression?",
        "In which city is the university attended by the founder of the company that makes "
        "the Model T?",
        "How do oil prices and airline stocks move together?",
        "Which band released the album whose cover was painted by the singer's brother?",
        "What is the relationship between soil erosion and river silt?",
        "Compare the causes and effects of the two recessions.",
        "What is the link between vitamin D and bone density?",
        "Who is the mother of the director of the film that won the 1999 prize?",
    ],
}


def _expand(rng: random.Random, label: str, n: int) -> list[dict]:
    rows: list[dict] = []
    seen: set[str] = set()
    domains = sorted(EVENTS)
    tries = 0
    while len(rows) < n and tries < n * 50:
        tries += 1
        domain = rng.choice(domains)
        x = rng.choice(EVENTS[domain])
        y = rng.choice([e for e in EVENTS[domain] if e != x])
        t = rng.choice(TARGETS[domain])
        if rng.random() < CLAUSE_SHARE[label]:
            query = _clause_query(rng, label, x, t)
            if query not in seen:
                seen.add(query)
                rows.append({"query": query, "label": label, "domain": domain,
                             "style": "clause", "source": "template"})
            continue
        if label == "forward":
            template, style = rng.choice(FORWARD), "effect-seeking"
        elif label == "backward":
            template, style = rng.choice(BACKWARD), "cause-seeking"
        elif rng.random() < 0.45:
            template, style = rng.choice(BIDIRECTIONAL), "connect/compare"
        else:
            domain = "multihop-factoid"
            if rng.random() < 0.7:
                template, style = rng.choice(ATTRS), "bridge"
            else:
                template, style = rng.choice(COMPARE), "comparison"
            p, q = rng.sample(PEOPLE, 2)
            w, w2 = rng.sample(WORKS, 2)
            o, o2 = rng.sample(ORGS, 2)
            place, place2 = rng.sample(PLACES, 2)
            query = template.format(
                r=rng.choice(ROLES), w=w, w2=w2, o=o, o2=o2, p=p, q=q, l=place, l2=place2
            )
            query = query[0].upper() + query[1:]
            if query not in seen:
                seen.add(query)
                rows.append(
                    {
                        "query": query,
                        "label": label,
                        "domain": domain,
                        "style": style,
                        "source": "template",
                    }
                )
            continue
        query = template.format(x=x, X=x[0].upper() + x[1:], y=y, t=t)
        if template[0].isupper():
            query = query[0].upper() + query[1:]
        if query not in seen:
            seen.add(query)
            rows.append(
                {
                    "query": query,
                    "label": label,
                    "domain": domain,
                    "style": style,
                    "source": "template",
                }
            )
    return rows


def main() -> None:
    rng = random.Random(SEED)
    rows: list[dict] = []
    for label in ("forward", "backward", "bidirectional"):
        hand = [
            {
                "query": q,
                "label": label,
                "domain": "mixed",
                "style": "hand-written",
                "source": "hand",
            }
            for q in HAND[label]
        ]
        generated = _expand(rng, label, PER_CLASS - len(hand))
        rows.extend(hand + generated)
    # Stratified 80/10/10 split.
    by_label: dict[str, list[dict]] = {}
    for row in rows:
        by_label.setdefault(row["label"], []).append(row)
    out: list[dict] = []
    for group in by_label.values():
        rng.shuffle(group)
        n = len(group)
        n_test, n_val = n // 10, n // 10
        for i, row in enumerate(group):
            row["split"] = "test" if i < n_test else "validation" if i < n_test + n_val else "train"
        out.extend(group)
    rng.shuffle(out)
    for i, row in enumerate(out, start=1):
        row["id"] = f"dq-{i:04d}"
    keys = ("id", "query", "label", "split", "domain", "style", "source")
    with OUT.open("w", encoding="utf-8") as fh:
        for row in out:
            fh.write(json.dumps({k: row[k] for k in keys}, ensure_ascii=False) + "\n")
    print(f"wrote {len(out)} rows to {OUT}")


if __name__ == "__main__":
    main()
