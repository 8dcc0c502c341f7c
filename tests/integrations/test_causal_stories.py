"""The default evidence on the team's causal stories, with the real models (slow)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sarg_integrations import SARGPipeline

pytestmark = pytest.mark.slow

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_causal_stories.py"
_spec = importlib.util.spec_from_file_location("bench_causal_stories", _BENCH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

KNOWN_MISSES = {
    # Since the eighteenth session a question for causes or effects has its own budget,
    # 0.7 of the retrieved tokens (SARGConfig.causal_evidence_budget; 0.8 since the
    # twenty-fourth session), filled only with documents telling an event: eighteen
    # stories that missed one step the triples do not link pass since (belo, brenmoor, dengue, dunmore, fenby, fenwick, halden, izel,
    # kiro, marra, nurses, orsk, quarn, ravel, sable, tamsin, tarsa, tern); the comments
    # below tell how each was missed before.
    # Written on 2026-12-02 as checks of stories nobody had tuned on, and run once each
    # (six sets; per-set first-run figures in docs/evaluation.md). Those that pass since
    # were fixed by general changes: one-stem links to open ends (port, orchard, billing),
    # similar-span links where no word is shared (school, blackout, market, exams,
    # vineyard), one-word open ends in lower case (rail, honey), the document stating the
    # best entry node when no chain starts at the asked event (ferry).
    # "The flu wave filled the beds …, and waiting times … rose" is now read (beds -> and
    # -> waiting times rose). Flu passes since the twenty-third session: asked what
    # happened, a triple told in the present ("Flu vaccines are updated every year")
    # links no document (evidence.asks_what_happened, links.states_in_present).
    # The bank story passes since an entry node restating the question's words is a focus
    # match ("no customer log in to online banking" for "lose access to online banking",
    # evidence.restated_entry_similarity): the login document's chain is anchored, and
    # "that connection" links to "the server's connection" by its stem.
    # The textiles, wildfire and school-bus stories pass since a document with no relation
    # that tells the past event where the story starts upstream is linked
    # (links.documents_stating_open_causes): "In March the government raised tariffs" /
    # the open cause "higher tariffs"; "A wildfire … burned" / "the fire".
    # "Fearing damage to jet engines, authorities closed the airspace" / "a cloud of ash":
    # that ash damages engines is world knowledge (cosine 0.06). Airport passes since the
    # twenty-fifth session: "Halden airport opened a new terminal last year" is dated
    # history (links.tells_past_event), so the fill passes over it for the ash document.
    # Every chain document was in, with a distractor (the dam's history, "The Kessa
    # reservoir was created in 1961"), until the twenty-fifth session: asked what
    # happened, a sentence dated as history links no document (links.dated_as_history).
    # The lake story passes since a similar span links only where its sentence tells an
    # event ("Farms around the lake grow mostly maize" is a profile).
    # A seventh set (reservoir, bus, pharmacy, shipwreck, bakery), run once on the code of
    # the similar-span links: bus and bakery passed; pharmacy passes since an open end may
    # name the relation upstream ("the halt" / "halted"). "The tanker ran aground … and
    # split its hull" and "crude oil leaked onto the beaches" state no relation: the one
    # triple-bearing document is not among the most relevant, and the query falls back.
    "shipwreck": "two chain documents state no relation: the query falls back",
    # An eighth set (library, wildfire, coffee, strike, river), run once on the final code
    # of 2026-12-02 and not used for any change: library, coffee and river pass.
    # The strike passes since the documents the relevance fill brings in are linked on:
    # "went on strike" / "the walkout" share no stem (cosine 0.15), so the walkout document
    # comes in by relevance, and its continuation ("the postponed operations") follows.
    # A ninth set (harbour, factory, metro, cocoa, school-bus), written on 2026-12-03 and
    # run once before any change: harbour, metro and cocoa passed. The factory passes since
    # an event's name keeps where it happened and drops when ("fire at Brena paint
    # factory", not "fire on Tuesday").
    # A tenth set (glacier, bees, measles, landslide, krona), written on 2026-12-03 and run
    # once on the ninth session's code: glacier and krona passed. Two pass since: the
    # landslide, as the evidence reads what an unsure direction classifier scores highest
    # ("Why was the Pella valley road closed?": backward 0.55, walked both ways under the
    # 0.15 margin), and the bees, as a question for effects links the document stating the
    # asked event one step upstream of the chains' first node ("the region banned the
    # pesticide" / "After the ban, …").
    # Measles passes since the twenty-second session: "Measles cases in Dunmore rose to
    # 120" states no relation and the protection document's effect is named "left many
    # children", but that node's clause ("left many children without protection against
    # measles") matches the question (SARGConfig.match_spans), so the prompt holds chains,
    # not a fallback.
    # An eleventh set (pension, cholera, renko, orchestra, palu), written on 2026-12-03
    # and run once on the tenth set's code: pension, renko and orchestra passed. Two pass
    # since: the cholera story, as upstream a similar span may name a relation's event
    # ("The floodwater" / "flooded Kessa district", 0.51), and the Palu story, as "What
    # did X do to Y?" now reads forward (the direction head's data gained the frame) and
    # the catch document continues the bleaching one the relevance fill brought in.
    # A twelfth set (dengue, steelworks, orsk, algae, checkin), written on 2026-12-03 and
    # run once on the eleventh set's final code: only the steelworks passed.
    # "Mosquitoes bred rapidly in the stagnant pools" is read mosquitoes -> "rapidly", not
    # from the pools, so nothing continues upstream to "pools of standing water".
    # "The council therefore closed the bridge" follows from another document: the most
    # similar one telling an event is the salt document (links.antecedent_documents), so
    # the salt and closure documents are in, but "Inspectors found that the weakened
    # cables could no longer carry heavy loads", the step between them, is not.
    # "toxic algae bloom" / "Because of the toxins": no shared stem (toxic, toxin), cosine
    # 0.23 (under 0.25); the bookings document comes in by relevance instead.
    # Algae passes since the causal budget is 0.8 (twenty-fourth session): the ban
    # document, which tells an event, comes in by the fill.
    # The check-in story passes since the asked event's document, "Hundreds of passengers
    # … were stranded", with no relation of its own, anchors the chains that continue it
    # ("staff had to process *passengers* by hand"; evidence.asked_event_evidence).
    # A thirteenth set (kalmar, norra, linden, ketar, varo), written on 2026-12-03 and run
    # once on the twelfth set's final code: kalmar and norra passed. Linden passes since a
    # modal alone ("Teachers in Linden *must* hold a state licence") is no signal. Ketar
    # passes since a subject and its verb, tagged with no signal, are one clause and no
    # relation ("Mount Ketar last erupted in 1911"; tagger._whole_clauses).
    # Varo passes since the present-tense main verb of a profile ("Varo Motors *builds*
    # cars in three countries") is no signal unless it says what one thing does to another.
    # A fourteenth set (ferrytown, varroa, tram, serra, clinic), written on 2026-12-03 and
    # run once on the thirteenth set's final code: none passed. Three pass since: ferrytown,
    # as a result clause's "it" is named by the object it stands for ("leaving it unsafe"
    # -> "ferry pier unsafe for boarding"), and tram, as a shared place name ("Oslin") no
    # longer continues the story, and varroa, as a cause naming how a thing came about
    # ("an outbreak of varroa mites") continues the story upstream of that thing ("mites").
    # Serra, clinic (and tarn, below) pass since a past clause with its own subject after
    # ", and" tells what the effect before it led to ("…, and waiting times doubled").
    # A fifteenth set (vettar, marlo, printer, wells, pell), written on 2026-12-03 after the
    # fourteenth set's changes and run once on that final code: marlo, printer and wells
    # passed.
    # Vettar passes since the twenty-second session: the node "pumping station" drops
    # the town and the water, but its clause ("the pumping station that supplied Vettar
    # with drinking water") matches the question.
    # Pell passes since downstream a cause may name the open end's event by its relation
    # ("Pell County *cut* its library budget" / "*The cuts* forced …"), and the story
    # goes on from there (the students document is still misparsed).
    # A sixteenth set (quarry, heatrail, fishery, orvo, alm), written on 2026-12-03 and run
    # once on the code of the documents telling a story's first step (the source links):
    # heatrail and alm passed (2 of 5). The quarry passes since a question for causes takes no
    # other effect of a held cause ("The Tamsin quarry produces limestone") unless it
    # tells an event, and a similar span links only where its sentence tells one.
    # Fishery passes since what a profile's habit is for is no relation ("The Marel
    # processing plant packs cod and haddock *for export*": tagger._habitual_aim).
    # Orvo passes since the asked event's document ("Orvo Electronics could not get enough
    # microchips", no relation) anchors the lack of chips, and downstream a cause may name
    # the open end's event by its relation ("halted the assembly line" / "The halt").
    # A seventeenth set (gazette, nurses, tarn, rubber, lorsk), written on 2026-12-03 and
    # run once on the twelfth session's final code: only rubber passed (1 of 5).
    # "Printing ink is made from pigments and oils" is read as a relation; since the
    # twenty-third session it links no document to a question about what happened. The
    # one chain ("press ran dry" <- "ink deliveries") runs through no most relevant
    # document, so the right documents come in on fallback.
    "gazette": "the press's chain is unanchored: the right documents on fallback, no chain",
    # "Patients whose operations were postponed were moved …" states no relation, and a
    # document with no triple is linked upstream only (linking one downstream too passed
    # this story but let "The central library was designed by a local architect" into pell).
    # "The Lorsk power station burns coal" is no longer read as a relation. The shutdown
    # document, which holds the relation that led to the shutdown, now anchors the chain
    # through "Its shutdown" as the asked event's document (a question for effects), but
    # "Thousands of flats in Lorsk had no heating" states no relation; it comes in by the
    # causal fill since a past state lasting "for four days" tells an event (nineteenth
    # session, links.tells_past_event).
    # An eighteenth set (corvin, halvik, brenmoor, velde, tolva), written on 2026-12-03 and
    # run once on the twelfth session's final code: only corvin passed (1 of 5). Three
    # pass since: halvik, as a noun made of a phrasal verb meets that verb ("walked off
    # the job" / "The walkout"); velde, as the document stating the best entry node must
    # tell an event ("Coal barges on the Velde carry about 2,000 tonnes each" stays out)
    # and the barges' profile is no longer read as a relation.
    # "Staff could no longer open patient records or book scans" states no relation, and
    # that locked computers stop staff opening records is world knowledge (cosine 0.27
    # with "Unable to treat new cases safely", whose reason the rules now read).
    # "The Tolva bridge collapsed … during a storm" and "Drivers had to take a 60-kilometre
    # detour" state no relation ("had to" is no signal), and that a collapsed bridge means
    # a detour is world knowledge: no chain, and the query falls back.
    "tolva": "the collapse and detour documents state no relation: the query falls back",
    # A nineteenth set (kelso, pasta, ostra, marrow, bray), written on 2026-12-03 after the
    # eighteenth set's changes and run once on that code: pasta and ostra passed (2 of 5).
    # "By February most of the ski slopes at Kelso were bare grass" is a state (copula)
    # with no relation, and "bare grass" / "no snow left" is world knowledge; kelso passes
    # since a past state framed "By February" tells an event (the causal fill takes it).
    # "Repairs to the kiln took five weeks, and production stopped" / "it could not
    # deliver the plates on time": that a stopped production delays plates is world
    # knowledge (cosine 0.23), so the kiln and repair documents stay out.
    # Marrow passes since the causal budget is 0.8: the kiln document comes in by the fill.
    # "Without their main food, thousands of puffins … failed to raise chicks": their main
    # food is the herring of another document (an anaphor across documents).
    "bray": "'their main food' is the herring of another document: the query falls back",
    # A twentieth set (dorne, skarv, arden, orin, halden), written on 2026-12-03 after the
    # tagger's "for lack of" reading and run once on that code: only orin passed (1 of 5).
    # "As a result, card payments … were declined": the cause is another document. The
    # evidence now holds the story (the fallback takes the asked event's document, its
    # antecedent "A faulty software update was installed …" and the crash document), but
    # no node is near the question, so the prompt holds no chain.
    "dorne": "no node is near the question: the right documents, on fallback",
    # "The parasites killed about a fifth of the farmed fish": the parasites are the sea
    # lice of another document, and nothing names the asked outbreak.
    "skarv": "'the parasites' are the sea lice of another document: the query falls back",
    # "A thunderstorm then broke the pollen grains into tiny particles that people breathed
    # deep into their lungs" is read as no relation, and the asthma link is world knowledge.
    # Arden passes since the causal budget is 0.8: the storm document comes in by the fill.
    # "Class sizes grew to more than 35 pupils" states one event, with no relation (no
    # longer read as "class sizes" causing "more than 35 pupils"), and a document with no
    # triple is linked upstream only (see nurses).
    # A twenty-first set (rosk, tarsa, belo, calder, norvik), written on 2026-12-03 and run
    # once on the thirteenth session's final code before its last change: only calder
    # passed (1 of 5). Rosk passes since a question for causes takes the document that
    # continues an upstream-linked one downstream ("the main paper machine" / "Without
    # the machine, the mill's output fell") when it tells an event.
    # "The insects stripped the young maize" continues "locust swarms" and leads to "the
    # harvest failed" by world knowledge only (insects / locusts, crops / harvest).
    # "The replacement buses could not carry everyone, and long queues formed" states no
    # relation, and "late for work" is read as an aim.
    # Norvik passes since the twenty-second session: the node "power" is entered by its
    # clause ("power to the Norvik printing plant on Sunday night"), and the fill brings the
    # presses and the late papers ("As a result, …", "The presses stood still" state no
    # relation of their own).
    # A twenty-second set (kilby, mossel, pirn, hollin, ravel), written on 2026-12-04 after
    # the cross-document antecedents (links.antecedent_documents) and run once on that
    # code: only kilby passed (1 of 5).
    # "The main lock … broke" / "Barges could no longer pass": world knowledge. Since the
    # twenty-sixth session its fallback evidence is right: "The stuck barges delayed coal
    # deliveries" (the small tagger reads "barges" as the verb) tells an event, so the
    # fill links it on from "forty of them were stuck".
    "mossel": "'the lock broke' / 'barges could no longer pass': the right documents on fallback",
    # Pirn passes since the twenty-second session: an unsure direction head follows the
    # question's cue words (backward), and "most of snow" is entered by its clause, so the
    # chains to the warm nights are in the prompt, not a fallback.
    # "A main sewer … collapsed" / "Engineers closed the High Street to dig up the broken
    # pipe": a sewer is a pipe by world knowledge, and "High Street" is a name.
    "hollin": "'sewer' / 'the broken pipe' is world knowledge: the query falls back",
    # "A severe storm warning was issued *for the coast*" is read as a purpose, and
    # "This meant that the fleet stayed in port" is joined to the ban, not the warning.
    # A twenty-third set (quill, brock, vale, dunley, kessel), written on 2026-12-04 after
    # the direction change and run once on that code: quill and dunley passed (2 of 5).
    # Brock and kessel pass since (a profile's "makes leather for shoes" is no relation,
    # "closure" meets "closed", the entry document's story start is linked).
    # "By morning, visibility at the airport was below 50 metres" is a state with no
    # relation, and "pilots could not see the runway" / "visibility" share no stem; vale
    # passes since a past state framed "By morning" tells an event (the causal fill).
    # A twenty-fourth set (harlow, tern, marsh, kiro, lindy), written on 2026-12-04 after
    # the twenty-third set's changes and run once on that code: harlow and marsh passed
    # (2 of 5). Lindy passes since a question for causes also takes the documents
    # continuing the chain's documents downstream ("Ferry crews … walked out" / "Without
    # crews, the ferry company could not sail its boats").
    # "The oil coated thousands of seabirds" is read as no relation, and a downstream
    # document with no relation is not linked; "As a result, birdwatching tours …" then
    # follows from a document that is out.
    # "The Kiro cobalt mine flooded" / "Its closure cut the world's cobalt supply": that a
    # flooded mine closes is world knowledge, and "Its" is the mine.
    # A twenty-fifth set (sorrel, penlan, ovin, velden, corran), written on 2026-12-04
    # after the "as" role change and run once on that code: sorrel and ovin passed (2 of
    # 5; ovin first ran under an id another story had, and passed once renamed). Penlan
    # passes since a named producer's output is no relation ("The Penlan quarry *produces*
    # granite for roads" had carried the chain).
    # "Doctors reported a sharp rise in asthma cases among children living there" states
    # no relation, and "In response, the council banned cars" follows from the most
    # similar document, the pollution one: that pollution raises asthma is world knowledge.
    "velden": "the asthma document states no relation; the ban follows from the pollution",
    # "Engineers found a large crack in the spillway" states no relation, and "Fearing a
    # failure, they lowered the reservoir" meets it only through world knowledge (a
    # crack, a failure). Since the twenty-sixth session its fallback evidence is right:
    # asked what happened, where a thing the question names came from ("The Corran dam
    # was built in 1958 to supply the city", links.tells_origin_of) carries no chain, and
    # the relevance fill brings the marina in.
    "corran": "'a crack' / 'Fearing a failure' is world knowledge: right documents on fallback",
    # A twenty-sixth set (brenna, tilde, karsk, mira, dunmore), written on 2026-12-04 after
    # the twenty-fifth set's changes and run once on that code: brenna passed (1 of 5).
    # Tilde passes since a time read as the cause is no relation ("closed in April after
    # 90 years") and a named producer's past output is a profile ("The Tilde steelworks
    # made rails").
    # Karsk passes since the twenty-sixth session: "*A* hydroelectric dam was built
    # across the lower Karsk River in 2005" brings in a new thing, which a year does not
    # make history, so it is the story's start for the chain from "dam".
    # No document states a relation: finding bacteria, testing batches and a recall meet
    # only through world knowledge, so the question falls back to relevance.
    "mira": "no document states a relation: the query falls back (the plant step stays out)",
    # "The slump forced two builders to stop work": that "house sales fell by a third" is a
    # slump is world knowledge, so the last step stays out.
    # A twenty-seventh set (fenby, vesna, orla, tamsin, keld), written on 2026-12-04 after
    # the FinCausal precision changes and run once on that code: vesna and orla passed (2
    # of 5; fenby first ran under an id another story had, and failed the same once
    # renamed). "With the pier unusable, the ferry service was suspended" reads since.
    # "Gales hit the coast" / "The waves tore away part of the pier": that gales raise
    # waves is world knowledge, and "tore away" is read as no relation.
    # "Police evacuated 2,000 residents living near the plant" says nothing of the leak:
    # why they were evacuated is world knowledge.
    # Two causes, then "As a result, the reservoir dropped": the opener is joined to the
    # most similar document (the rain), and the heatwave, told "At the same time", stays out.
    "keld": "'As a result' follows two documents and is joined to one; the heatwave stays out",
    # A twenty-eighth set (sable, corvo, lusk, wren, ambry), written on 2026-12-04 after the
    # sixteenth session's changes and run once on that code: only wren passed (1 of 5).
    # Three pass since: ambry and lusk, as an entry node restating the question's words
    # is a focus match ("club filed for bankruptcy" for "Why did Ambry FC file for
    # bankruptcy?", 0.64; "owners halted production", 0.62), and corvo, as a thing of a
    # named owner is followed by similar spans ("computer systems of Corvo General
    # Hospital" / "access to patient records", 0.44).
    # "Water backed up behind the jam": the jam's effect is told as a place (no longer
    # read as the water causing the jam), so the story stops at the rising river.
    # A twenty-ninth set (quarn, ollen, tovar, brill, holt), written on 2026-12-04 after the
    # twenty-eighth set's changes and run once on that code: ollen and tovar passed (2 of
    # 5). Holt passes since a fronted "Under" opens a cause (it had been read as a place)
    # and an irregular past meets its verb's noun ("An audit *found*" / "The *findings*").
    # "The fuel tanker due that week could not unload its cargo" (no longer read as the
    # week causing the tanker) and "Petrol stations soon ran short" meet only through
    # world knowledge, and so do the strike and the tanker.
    # "A fire broke out in a Brill Telecom data centre" / "The blaze damaged the servers":
    # a fire is a blaze by world knowledge (cosine 0.17). Since an outcome told after "As
    # a result," tells an event, the outage and the servers are in, on fallback.
    "brill": "'A fire broke out' / 'The blaze' share no word: the fire document stays out",
    # A thirtieth set (pelt, marra, izel, fenwick, tala), written on 2026-12-04 after the
    # twenty-ninth set's changes and run once on that code: none passed (0 of 5). Since,
    # a time read as the effect is no relation ("rose sharply *in the spring*"); no story
    # of the set passes for it.
    # Pelt passes since the twenty-sixth session: "The Pelt cooperative was formed by 40
    # farming families" is where the asked cooperative came from, no step of the story,
    # and the budget it took brings "Milk production … rose sharply" in.
    # "Engineers closed the Marra tunnel" / "Lorries had to take a … detour over the
    # mountain pass": that a closed tunnel means a detour is world knowledge, and "over
    # the mountain pass" is read as a reason.
    # "The falling water" / "lowered the level of Izel lake" share no stem, and "Tourists
    # stayed away, and visitor numbers dropped" states no relation.
    # "To fix the fault" / "The sensors could stop the airbags from opening": the fault is
    # the sensors' by world knowledge ("faulty" / "fault" share no stem either).
    # "The school closed … so that cleaners could disinfect the classrooms" gives the
    # closure only its purpose, and "The closure forced teachers to postpone the tests"
    # shares one stem with it, as another effect; "Norovirus is a common cause of stomach
    # illness", a general fact, continued the outbreak until the twenty-third session: told
    # in the present, it carries no chain of a question about what happened, and tala passes.
    # A thirty-first set (dorsey, wexley, bellmar, kerrin, ostby), written on 2026-12-04 and
    # run once with the eighteenth session's event-only fill at the old budget (0.5): only
    # dorsey passed (1 of 5); with the causal budget, 4 of 5 hold the right documents.
    # "Engineers … shut it to all traffic" / "Commuters from the island now spend an extra
    # hour" is world knowledge, and no triple is read: the query falls back. Since the
    # twenty-fifth session its fallback evidence is right: a state told in the present as
    # one that came about ("now spend") tells an event (links.tells_past_event), and the
    # causal fill takes it.
    "kerrin": "no triple is read: the right documents on fallback, no chain",
    # Every document is in, on fallback: "banned swimming" is no relation to the tagger.
    "ostby": "the ban states no relation: the right documents on fallback, no chain",
}


# Where a chain document stays out, the budget's relevance fill could bring a distractor
# in: the most relevant document left was a profile. On fallback, a question for causes
# first takes the asked event's document and the story behind it (the bank, measles and
# Dorne stories: evidence.asked_event_story_evidence), and their profiles stay out. Since
# the eighteenth session a causal question's fill takes only documents telling an event
# (evidence.event_documents), so sixteen stories whose fill took a profile (vettar, tolva,
# marrow, bray, skarv, arden, norvik, mossel, hollin, tern, kiro, mira, tamsin, quarn,
# marra, fenwick) hold no distractor; those below bring theirs in another way. Since the
# twenty-third session, asked what happened, a sentence told in the present neither
# carries a chain nor links a document: flu, gazette and tala hold no distractor.
KNOWN_DISTRACTORS = {
    # "the reservoir nearly empty" is read in its whole span, and "Kessa reservoir created
    # in 1961" (a real temporal triple of the dam's history) shared its stem "reservoir"
    # until the twenty-fifth session (a dated sentence links no document). Corran's and
    # Pelt's origins ("The Corran dam was built in 1958", "The Pelt cooperative was formed
    # by 40 farming families") carried a chain until the twenty-sixth session.
    # The causal budget held one document more, "Halden airport opened a new terminal last
    # year", until the twenty-fifth session read "last year" as history.
}


@pytest.fixture(scope="module")
def pipeline() -> SARGPipeline:
    return SARGPipeline()


def _stories(known: dict[str, str]) -> list:
    """Every story as a test parameter; those in ``known`` are strict expected failures."""
    return [
        pytest.param(s, id=s["id"], marks=pytest.mark.xfail(strict=True, reason=known[s["id"]]))
        if s["id"] in known
        else pytest.param(s, id=s["id"])
        for s in bench.load_stories()
    ]


@pytest.mark.parametrize("story", _stories(KNOWN_MISSES))
def test_default_evidence_holds_the_chain_documents_and_no_distractor(pipeline, story) -> None:
    out = bench.check(pipeline, story)
    assert not out["missing"] and not out["distractors"], out
    assert not out["fallback"]


@pytest.mark.parametrize("story", _stories(KNOWN_DISTRACTORS))
def test_no_distractor_enters_the_default_evidence(pipeline, story) -> None:
    assert not bench.check(pipeline, story)["distractors"]


def test_story_ids_are_unique() -> None:
    # The known misses and the tests' ids are keyed by story id.
    ids = [s["id"] for s in bench.load_stories()]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


# Stories written on 2026-12-05 by helpers that saw no code
# (benchmarks/data/causal_stories_untuned.jsonl). Sets a and b (50 each): set a was read
# to make the twenty-third session's changes (28 of 50 passed before them); set b only
# for what the changes broke (29 of 50 before). Sets c and d (40 each), asked for more
# varied writing (links only implied, steps told in the present, distractors that tell
# past events too), were written in the twenty-fourth session and passed 8 and 13 on its
# starting code (set c was read for changes, d only run until the twenty-fifth session
# read both). Set e (40), written the same way in the twenty-sixth session, passed 23 on
# that session's code before its last change, and 23 on the twenty-fifth session's final
# code too; its failures were then read. Set f (40), written the same way in the
# twenty-seventh session, passed 11 on its first run, on that session's code both before
# and after its first change to the evidence (a dated sentence restating the asked
# event); its failures were then read. Set g (40), written the same way later in that
# session, passed 10 on the session's starting code and 7 on its code of then: a
# change read off sets c-f (a dated sentence keeps a chain only when it names the asked
# event) lost 4 of its stories, so it was reverted (11 since). Set h (40), written the
# same way in the twenty-eighth session while dating a story's later steps from the
# asked event's year was built off sets f and g, passed 15 on that session's starting
# code and 18 with it, both first runs (19 since a possessive's "s" stopped counting as a
# shared word of what happened). Set i (40), written the same way after that, passed 10 on
# its first runs on both codes. Sets j and k (40 each), written the same way in the
# twenty-ninth session, passed 14 and 9 on their first runs, before that session's
# changes to the evidence, and were then read; set l (40), written after those changes,
# passed 13 on its first runs on both that session's starting and its final code. Set m
# (40), written the same way in the thirtieth session after its first change (a question
# asked with a verb in the past), passed 7 on its first runs on both that session's
# starting code and that change, and 8 with its second (a history sentence tells the asked
# event only in the question's words or in the most relevant document), which lost 2
# of set g (22 -> 20: an asked event's dated sentence in other words) and won 9 elsewhere.
# Set n (40), written the same way while that session's last two changes were built and
# run only at its end, passed 14 on its first runs on both its starting and final code
# then; 15 with the session's last change (a causal wording read as asking neither way),
# which lost one of set j (a why-question of a present state now filled with a plan).
# In the thirty-first session the evidence judge (sarg_integrations.judge) was trained on
# the team's stories and sets a-n, so from then on those sets are its training data, and
# their floors rose with it (312 -> 384 of 580). Sets o, p and q (40 each) were written by
# helpers that saw no code while the judge was built and are never read by its training:
# o passed 8 on that session's starting code and 17 with the judge's first design (whose
# drops and joins were then narrowed: 16); p and q, written after the design was fixed,
# passed 3 and 8 on the starting code and 10 and 13 with the judge, all first runs.
# In the thirty-second session the judge's thresholds were set on the team's stories,
# sets a-n and o-q (a passage relevance alone brought in stays only when the judge
# scores it 0.5 or more; a document it scores above 0.95 joins beside chains too, when
# at least half as relevant as the least relevant passage kept): a-n 384 -> 432, o-q
# 39 -> 54, the team's 151 kept. Sets r and s (40 each), written by helpers that saw no
# code at that session's start, passed 19 and 14 on its starting code and 20 and 19 with
# the new thresholds, first runs (their tallies were printed beside the grid's, the
# thresholds picked on the other sets). The judge was then retrained on the team's
# stories and sets a-s (931 stories), so from then on those sets are its training data:
# a-n 432 -> 447 (b 47 -> 45, c 29 -> 28, g 33 -> 32: the judge's new readings), o-s 93 ->
# 134. Sets t and u (40 each), written by helpers that saw no code before that retraining
# and never read by it, passed 23 and 15 on that session's starting code, 28 and 16 with
# the new thresholds and 33 and 25 with the retrained judge, all first runs. Sets v, w, x
# and y (40 each), written later in that session by four more helpers, passed 25, 25, 25
# and 28 on their first runs with that judge; a judge retrained on a-s and v-y as well
# passed only 26 and 21 of t and u, so it was not shipped and v-y stay held out.
# In the thirty-third session sets z and za (40 each; za asked for tempting distractors
# sharing the question's words and dates) were written by two more helpers that saw no
# code and passed 28 and 14 on their first runs, on that session's starting code. The
# judge then stopped adding a document that tells another event ("Separately, ...") and
# joined beside chains at a fifth of the least relevant kept passage's relevance, not
# half (a story's first cause often shares little with the question): t-y 161 -> 167,
# z 28 -> 30, za 14 -> 15, a-n 447 -> 457, o-s 134 -> 138, the team's 151 kept; x lost
# one story (25 -> 24: a sure same-place distractor now joins) and v one while gaining three.
# Then a name opening a text ("Kelsall Rovers Women won the county cup") stopped counting
# as a word of what happened: c, i, j, p, r and za gained one story each, none lost.
# In the thirty-fourth session a document that only a shared node of an extracted triple
# linked to the evidence left when the judge scored it below 0.05 (its steps so linked
# score 0.07 or more): t-y 167 -> 173 (v, w, x +1, y +3), a-n 460 -> 469, o-s 140 -> 145,
# z, za and the team's 151 kept, none lost. Set zb (40; its helper, who saw no code, was
# asked for steps linked only by world knowledge in many stories and tempting
# distractors in at least 15) was written then: first runs 17 on that session's starting
# code and 18 on its final code. Set zc (40; its helper, who saw no code, was asked for
# distractors sharing the question's place and time in at least 12 stories and for
# "before" / "until" / "prior to" inside some chain documents) was written in the
# thirty-fifth session: first runs 10 on that session's starting code and 10 on its
# final code (25 of its 30 failures let in a distractor).
# In the thirty-sixth session the judge checked the kept chains' documents (below 0.01,
# the document most relevant to the question spared): a-s 614 -> 629, t-zc 247 -> 252
# (u, v +1, w +2, zb +1), the team's 151 kept, none lost. Set zd (40; its helper, who saw
# no code, was asked for a profile or history of a thing the question names, told as a
# cause and effect of its own, in at least 15 stories, and same-place, same-week
# distractors in at least 12) was written then: first runs 12 on that session's starting
# code and 12 on its final code (all 28 failures let in a distractor, 21 of them by
# relevance, the judge scoring "Amberstoke Rovers beat Coldhurst 3-1" 0.994 for what the
# closure of Brindle Bridge in Amberstoke led to).
# In the thirty-seventh session sets ze, zf, zg and zh (40 each; written by four helpers
# that saw no code: same-place matters, histories told with causal words, the same kind
# of event elsewhere, plans and statistics as distractors; zf and zh with harder ones)
# passed 18, 9, 18 and 12 on their first runs on that session's starting code. The judge
# was then retrained on the team's stories and sets a-zd (1,371 stories; ze onward are
# never read by its training) and joins only above 0.97 (at 0.95 it added an unrelated
# market passage to the team's demo-gba1 at 0.961): ze-zh 57 -> 67 (18 won, 8 lost; a
# second training seed gave 68), a-s 629 -> 647 (n 31 -> 30 and o 28 -> 27, the
# retrained judge's readings), t-zd, now its training data, 264 -> 358, the team's 151 kept.
# Its chain check then rose from 0.01 to 0.1 (on its training stories the chain steps so
# checked score 0.28 or more but one, 0.009, and 46 of 51 such distractors less than 0.1):
# ze-zh 67 -> 74 (zf +3, zg +1, zh +3), a-zd +8 (c, e, h, n, p, w, y, zb), none lost.
# The check then skipped the documents of a chain running across documents (the judge
# scored "River flooding leads to crop damage." 0.006 for "What does heavy rain lead
# to?", a generic story unlike its training stories): q and zb lost one story each.
# In the thirty-eighth session 22 helpers that saw no code wrote sets zi-zz and zza-zzd
# (40 each, each set with its own slant). First runs on that session's starting code:
# zi-zl 14, 20, 10, 23; zm-zt 22, 15, 12, 30, 19, 6, 2, 2; zu-zz 3, 10, 14, 12, 12, 19;
# zza-zzd 18, 12, 0, 22. The judge was retrained on the team's stories and sets a-zh and
# zm-zz (2,091 stories; zi-zl and zza onward are never read by its training) and joins
# beside chains only at half the least relevant kept passage's relevance (it scored the
# demo corpus's other story 0.997 and 0.983 for its two questions): zi-zl 67 -> 85,
# zza-zzd (run only at the start and the end) 52 -> 68, ze-zh 74 -> 110, zm-zz
# 178 -> 305, the team's 151 kept; a-zd, the old judge's training data and the rules'
# tuning sets, 1,011 -> 937 (the new judge, trained on more varied text, reads them
# less well: its held-out share's exact stories 70.3 % against the old judge's 83.2 %).
# In the thirty-ninth session eight helpers that saw no code wrote sets zze-zzl (40 each:
# a broad mix; later consequences and the asked cause's own cause as distractors; wire
# copy with effects first; nominalisations; small-town life; documents referring back
# with pronouns; indirect questions; distractors sharing the question's words). They pass
# 27, 2, 20, 30, 17, 32, 33 and 12 on that session's code, which changed nothing they
# run: a judge retrained on 2,371 stories passed the same 173 of the 320, and the team's
# 150, so it was not shipped (docs/evaluation.md).
# In the fortieth session eight more helpers that saw no code wrote sets zzm-zzt (40 each:
# a broad mix; business figures; science and health; later consequences and earlier
# causes as distractors; sport, arts and councils; distractors naming the chain's people
# and places; forward questions only; backward questions only). First runs on that
# session's starting code: 23, 24, 24, 0, 27, 28, 28, 21 (175 of 320). A second judge,
# reading the question with the whole retrieved set at once, was trained on the team's
# stories and sets a-zzd but zzc (2,371 stories); the default judge is now its geometric
# mean with the judge reading each document alone: zze-zzl 173 -> 186, zzm-zzt
# 175 -> 192, zzc 1 -> 2, the team's 151 kept; a-zzd but zzc, training data, 1,505 -> 1,520
# (replayed on each story's recorded evidence; docs/evaluation.md).
# In the forty-first session eight more helpers that saw no code wrote sets zzu-zzzb (40
# each: a broad mix; later consequences and earlier causes as distractors; transport and
# utilities; schools, housing and courts; steps linked implicitly beside distractors
# with causal words; farming and weather; questions phrased in less common ways; a
# rival's parallel story as distractors). First runs on that session's starting code:
# 25, 2, 26, 28, 20, 26, 25, 5 (157 of 320). Eight more then wrote zzzc-zzzj as the set
# reader's training data (later consequences and earlier causes, or a rival's parallel
# story, as distractors). The judge then checked every linked document, not only a
# triple's (zzu-zzzb 157 -> 163), the set reader was retrained on 3,011 stories (the
# team's, a-zl, zm-zz, zza, zzb, zzd, zzm-zzt, zzzc-zzzj; 168) and a document joins
# above 0.6, not 0.97 (177): zze-zzl 186 -> 205, zzc 2 -> 3, the team's 151 kept; zzm-zzt,
# now training data, 192 -> 218, a-zzd but zzc 1,520 -> 1,712. zx, zzf and zzj lose one
# story each (a hailstorm at a farm nearby joins at 0.635 for what a late frost did to
# an orchard; a council's budget gap, the asked charge's own cause, 0.061, stays; a
# planned crossing joins at 0.89). The new training sets pass only 61 of 320: 12, 8, 4,
# 6, 10, 2, 10, 9 (the document reader, which reads one document, keeps their
# distractors in the mean).
# In the forty-second session eight more helpers that saw no code wrote sets zzzk-zzzr
# (40 each: a broad mix; later consequences and earlier causes as distractors, twice; a
# rival's parallel story; another year's story of the same place; chains of four or five
# steps; steps linked implicitly beside distractors with causal words; mixed registers).
# First runs on that session's starting code: 37, 1, 2, 5, 17, 30, 27, 17 (136 of 320).
# A document the judges score above 0.9 then joined at a tenth of the relevance floor
# (140), and, asked why, a passage telling what came of the asked event left (149):
# zze-zzl 205 -> 214, zzu-zzzb 177 -> 191 (zzv 5 -> 14), zzc 3 -> 8, the team's 151 kept.
# zo, zx and zzzi lose one story each (a cause told "six weeks after the alleged assault"
# for why the assault charge was dropped; "closed two weeks after her knee replacement"
# for why a second operation was needed; a rival's second step, 0.93, joins at the new
# floor).
# In the forty-third session eight more helpers that saw no code wrote sets zzzs-zzzz
# (40 each: a broad mix; a rival's parallel story; forward questions only, with the asked
# cause's own earlier cause as a distractor; backward questions only, with later
# consequences as distractors; another year's story of the same place; chains of four or
# five steps; implicit steps beside distractors with causal words; mixed registers and
# figures). First runs on that session's starting code: 32, 5, 5, 15, 15, 28, 31, 22
# (153 of 320). Asked why, a document opening by what came after the asked event in other
# words ("Following the outage, ...") then left (166), and the set reader was retrained on
# 4,011 stories, every set up to zzzr (172): zzzv 15 -> 27, zzzu 5 -> 9, the team's 151
# kept. The sets it now reads rose (zze-zzl 214 -> 240, zzu-zzzb 191 -> 220, zzzk-zzzr
# 149 -> 191, zzc 8 -> 10; zzm-zzt 224 -> 229, zzzc-zzzj 66 -> 89, a-zzd but zzc
# 1,787 -> 1,791), but eighteen older sets lose one to four stories each (zh 34 -> 30; n,
# u, zi and zv two each; b, c, p, q, v, ze, zk, zl, zn, zo, zp, zza and zzq one each): b's
# to the new rule ("Because of the attack, Channel Meridan could not air its adverts for
# three days", a step of why it issued a profit warning: "the attack" is more like the
# question than like any document), the others to the retrained reader's scores.
# Each floor is the count on the latest session's final code: a change that loses
# stories here must say why.
UNTUNED = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "causal_stories_untuned.jsonl"
UNTUNED_FLOORS = {
    "a": 48, "b": 49, "c": 39, "d": 36, "e": 38, "f": 35, "g": 35, "h": 37, "i": 30,
    "j": 37, "k": 35, "l": 34, "m": 29, "n": 33, "o": 29, "p": 34, "q": 32, "r": 37,
    "s": 37, "t": 38, "u": 36, "v": 36, "w": 36, "x": 33, "y": 37, "z": 36, "za": 33,
    "zb": 33, "zc": 36, "zd": 34, "ze": 32, "zf": 28, "zg": 35, "zh": 30, "zi": 32,
    "zj": 31, "zk": 19, "zl": 33, "zm": 35, "zn": 28, "zo": 32, "zp": 35, "zq": 38,
    "zr": 26, "zs": 26, "zt": 15, "zu": 16, "zv": 23, "zw": 30, "zx": 28, "zy": 31,
    "zz": 27, "zza": 31, "zzb": 26, "zzc": 10, "zzd": 32, "zze": 37, "zzf": 13, "zzg": 34,
    "zzh": 37, "zzi": 29, "zzj": 34, "zzk": 38, "zzl": 18, "zzm": 32, "zzn": 26, "zzo": 29,
    "zzp": 11, "zzq": 34, "zzr": 32, "zzs": 36, "zzt": 29, "zzu": 30, "zzv": 20, "zzw": 31,
    "zzx": 34, "zzy": 29, "zzz": 34, "zzza": 30, "zzzb": 12, "zzzc": 14, "zzzd": 16,
    "zzze": 11, "zzzf": 9, "zzzg": 13, "zzzh": 3, "zzzi": 13, "zzzj": 10, "zzzk": 40,
    "zzzl": 12, "zzzm": 12, "zzzn": 15, "zzzo": 24, "zzzp": 33, "zzzq": 30, "zzzr": 25,
    "zzzs": 32, "zzzt": 6, "zzzu": 9, "zzzv": 27, "zzzw": 15, "zzzx": 28, "zzzy": 32,
    "zzzz": 23,
}


def test_the_untuned_story_sets_keep_their_floor(pipeline) -> None:
    stories = bench.load_stories(UNTUNED, demo=False)
    passed = dict.fromkeys(UNTUNED_FLOORS, 0)
    for story in stories:
        out = bench.check(pipeline, story)
        passed[story["set"]] += not out["missing"] and not out["distractors"]
    assert {s["set"] for s in stories} == set(UNTUNED_FLOORS)
    assert all(passed[s] >= floor for s, floor in UNTUNED_FLOORS.items()), passed
