"""Recall: the memories that bear on a task, best first, and a log of why each was (or was not) chosen.

`recall(folder, query)` scores every live memory against the query, lexically and offline; `recall_llm`
lets a model pick from the folder's manifest instead (Claude Code's own approach). Both return a
RecallResult and append it to `.memdir/recall.jsonl`. Nothing here prints.

Over 500 lines for now: terms, the stored term index, scoring and the gate, the log and the model
variant are sections of this one module; splitting them into modules is planned (docs/recall.md).
"""

# How the score is built, and why (docs/recall.md has the long form and the evaluation):
#
# - score = w_rel x relevance + w_rec x recency + w_imp x importance (0.6 / 0.25 / 0.15 by default).
#   recency = 0.5 ** (days since `updated`, else `created`) / half-life (30 days); importance defaults to 0.5.
# - Relevance is BM25F over two fields: the head (name + description, the memory's one-line claim, weighted
#   twice) and the body. Terms are the ones duplicate detection uses (memdir.core.similarity): case- and
#   accent-folded, stopwords of en/de/es/fr dropped, lightly stemmed, CJK runs as characters and bigrams.
#   Pairs of adjacent terms are terms too, so "route view" or "Lantern Keep" count for more than the two
#   words apart. Small numbers (one or two digits) in a query are ignored: they match by accident.
# - A query word weighs what it tells apart. Folder statistics (IDF) say how rare a word is here; in a
#   small folder almost everything is rare, so a general-language prior damps the words that are common
#   in any English text ("explain", "example", "new", "week"). Without it, "Explain what a monad is with
#   a simple example" recalls whatever memory says "explain" and "example". A folder of fewer than 100
#   memories gets the IDF of one of 100: in a folder of three, a word two of them use is not common.
# - A small glossary of general work vocabulary lets a query word match its synonyms and translations
#   at half weight: "ship" finds "deploy", "invoice" finds "Rechnung". Folders are often bilingual;
#   memories written in German answer English questions. `recall.synonyms` from the config adds a
#   folder's own vocabulary at full weight (its owner says the words mean the same).
# - A superseded memory is never recalled, but what matched it passes (at 0.8) to the memory that
#   replaced it: a question in the old memory's words is about the topic its successor now covers.
# - The best matches lend their names. The rare words in the heads of the three best matches (a word in
#   at most 5% of the folder, and at most 50 memories, and not common English) count as query words
#   at half the weight of the match that lent them, in other memories' heads: "the vineyard pilot" is a
#   FieldSense task when the pilot's memory says so, and FieldSense's supplier bears on it. This runs
#   only once the query has passed the gate, and the gate weighs the query's own words alone. A lent
#   name raises a memory that matches the query; it never recalls one that does not.
# - Raw BM25 grows with log(folder size); it is divided by the largest IDF the folder can give, so that
#   one rare word matched in a head scores about 1 whatever the size, then mapped to 0..1 as
#   relevance = 1 - exp(-score).
# - Two gates. A query whose best memory has relevance below `gate` (0.75: about one and a half rare
#   words) recalls nothing: it is about something the folder does not know, and recency and importance
#   must not inject a memory into it. And each recalled memory needs a relevance of its own of at least
#   `min-relevance` (0.3: one rare word in a body), however new or important it is, and some of it
#   from the query's own words. The query gate looks at `direct`: the relevance from the query's own
#   words and their synonyms, before any names are lent.

from __future__ import annotations

import datetime as dt
import hashlib
import heapq
import itertools
import json
import math
import mmap
import os
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from memdir.core.bulk import paused_gc
from memdir.core.cache import RACY_SECONDS, ParseCache
from memdir.core.config import RecallSettings
from memdir.core.errors import MemdirError
from memdir.core.model import Memory, exclusion, name_key
from memdir.core.outward import dumps

# The terms duplicate detection uses, made the same way (and as fast).
from memdir.core.similarity import is_cjk, term_list, term_sequence
from memdir.core.store import (
    STATE_DIR,
    FileProblem,
    append_lines,
    ensure_state_dir,
    list_files,
    load_file,
    read_jsonl,
    rotate_log,
    state_dir,
    write_state_file,
)
from memdir.write import llm

if TYPE_CHECKING:
    from memdir.folder import MemoryDir

__all__ = [
    "INDEX_FILE",
    "LOG_FILE",
    "RecallError",
    "RecallResult",
    "Recalled",
    "read_log",
    "recall",
    "recall_llm",
    "recalled_memories",
]

INDEX_FILE = "recall-index"
LOG_FILE = "recall.jsonl"
LOG_CANDIDATES = 50  # candidates written to the log per recall, best first (all chosen ones included)

# BM25F. The head is the memory's claim in one line: a word there says more than one in the body.
_K1 = 1.2
_HEAD_WEIGHT, _BODY_WEIGHT = 2.0, 1.0
_HEAD_B, _BODY_B = 0.5, 0.75  # length normalisation: heads are all about as long, bodies are not
_SYNONYM_WEIGHT = 0.5  # a synonym or translation is weaker evidence than the word itself
_NEIGHBOUR_WEIGHT = 0.5  # a name the best matches carry in their heads, as evidence for another memory
_NEIGHBOUR_SOURCES = 3  # the best matches whose heads lend their names
_NEIGHBOUR_SHARE, _NEIGHBOUR_MOST = 0.05, 50  # a word in more memories than these is a topic, not a name
_SUCCESSOR_SHARE = 0.8  # what a superseded memory's match passes to the memory that replaced it
_MIN_FOLDER = 100  # folders smaller than this get the IDF of a folder this size (see _idf)


class RecallError(MemdirError):
    """Recall could not be done as asked (e.g. `--llm` without an API key, or the API failed)."""


# --- terms ---------------------------------------------------------------------------------------


def _pairs(terms: Sequence[str]) -> list[str]:
    """Adjacent word terms joined by '_' (never inside a term: tokens have no underscores)."""
    words = [t for t in terms if not is_cjk(t)]
    return [f"{a}_{b}" for a, b in itertools.pairwise(words)]


# --- what a query word is worth ------------------------------------------------------------------

# The most frequent English words (wordfreq 3.1's top 2,000, https://github.com/rspeer/wordfreq, data
# CC BY-SA 4.0; stopwords left out), in bands of Zipf frequency: 6+, 5.5-6, 5-5.5, 4.7-5. A query word
# in a band weighs what the band says instead of 1. Stored as words, stemmed when first used, so the
# table follows the stemmer.
_COMMON_WORDS = {
    0.1: """
    back first get go good know like make much new one people said see think time two want way well
    """,
    0.2: """
    already always another anything around away bad based believe best better big business call called came care
    case change city come company day days different end enough even ever every everything family far feel find
    found four free full game getting give god going got government great group hard head help high home house
    however including job keep last left let life little live long look looking lot love made making man many
    may mean men might money mr music must name national need never next night nothing number old part person
    place play please point power public put read real really right say school second seen set show side since
    small someone something start state states still stop support sure system take team tell thing things though
    thought three times today told took top try use used water week went white without women work world year
    years yes yet
    """,
    0.35: """
    able access according account across act action actually add added addition age ago ahead air al album allow
    allowed almost alone along although amazing america american among amount answer anti anyone april area
    areas army art article ask asked association attack attention august australia available average baby ball
    bank base beat beautiful became become bed began beginning behind bill bit black blood blue board body book
    books born box boy boys break bring british brother brought brown build building built buy california
    campaign cannot capital car card career cases cause center central century certain certainly chance changed
    changes character charge check chief child children china chinese choice church class clear close club co
    code cold college comes coming committee common community companies complete completely conference
    considered content continue control cool cost council countries country county couple course court cover
    crazy create created credit cross culture cup current currently cut daily dark data date daughter david de
    dead deal death december decided decision deep department described design despite development die died
    difference difficult director district dog door double dr drive due early earth east easy eat economic
    education effect eight election else energy england english enjoy entire especially europe european event
    events everyone evidence exactly example except expect experience eye eyes face fact fall fans fast father
    february federal feeling felt female field fight figure film final finally financial fine fire five focus
    follow followed following food football force foreign forget form former forward french friend friends front
    fun funny future games gas gave general george gets girl girls given gives giving goal goes gold gone gonna
    green ground groups growth guess guy guys hair half hand hands happen happened happy hate health hear heard
    heart held hell hey hi higher himself history hit hold hope hospital hot hour hours huge human husband ice
    idea ii important include included increase india individual industry information inside instead interest
    interesting international internet involved island issue issues james january john join july june kept key
    kids kill killed kind king knew known knows la land language large late later law lead leading league learn
    least leave led legal less level light likely limited line list listen lives living local lol london longer
    looked looks lord lose loss lost loved low lower main major makes management march mark market married match
    matter maybe means media medical meet meeting member members message met michael middle miles military
    million mind mine minister minutes miss missing model modern mom moment month months morning mother move
    moved movie moving myself natural near nearly needed needs network news nice non normal north note november
    october offer office officer official often oh oil ok okay ones online open order original others outside
    page paid pain paper parents park particular parts party pass past paul pay peace per percent perfect
    performance perhaps period personal phone pick picture piece places plan plans played player players playing
    points police policy political poor popular population position possible post potential practice present
    president press pressure pretty previous price private probably problem problems process production products
    professional program project property provide provided published quality question questions quickly quite
    race radio range rate rather reading ready reason received recent recently record red region related
    relationship release released remember report reported required research respect response rest result
    results return review rights risk river road rock role room round rules run running russian safe sales save
    saw saying says schools science sea season section security seeing seem seems self send sense sent september
    series serious service services seven several shall share short shot shows sign similar simple simply single
    sir site situation six size sleep social society sometimes son song soon sorry sort sound source south space
    speak special specific speed spent st staff stage stand standard star started starting station stay step
    store story straight street strong student students study stuff style success summer super systems table
    taken takes taking talk talking tax technology ten term terms test text thank thanks themselves thinking
    third title together tomorrow tonight total towards town track trade training travel treatment tried true
    trust truth trying turn turned tv type uk understand union united university using usually value various
    version video view visit voice vote wait waiting walk wall wanna wanted wants war washington watch watching
    ways website weeks weight west western whatever whether whole wife win wish within woman won word words
    worked working works worth write writing written wrong wrote yeah york young yourself
    """,
    0.5: """
    ability absolutely accept accident accounts acting actions active activities activity actual ad additional
    address administration adult advanced advantage advice africa african afternoon agency agent agree agreed
    agreement aid airport alive alternative americans analysis angeles animal animals announced annual anymore
    anyway anywhere apart app apparently appear appeared appears apple application appreciate approach arm arms
    arrived articles artist asking assistant associated attempt audience australian author authority avoid award
    awards aware awesome background bag balance band bar basic basis battle bay beach bear beauty becomes
    becoming begin believed benefit benefits bet beyond bigger biggest billion birth birthday block blog boat
    boss bottom bought brain brand breaking bridge bringing britain broke broken budget bus busy buying calling
    calls camera camp canada cancer capacity captain cards carried carry cars cash cast cat catch caught caused
    cell cells cent centre chairman challenge changing channel characters charles cheap chicago choose chris
    christ christian christmas cities citizens civil claim claims classes classic clean clearly click climate
    closed closer clothes coach coast coffee collection color comment comments commercial commission communities
    compared competition completed complex computer concept concerned condition conditions congress connection
    consider construction contact continued continues contract conversation copy core corner correct costs count
    covered crime criminal critical cultural customers dad damage dance dangerous dear decide decisions defense
    definitely degree demand democratic description designed details develop developed digital dinner direct
    direction directly discovered discussion disease distance division doctor dogs dollars dont doubt draw dream
    dress drink drinking driver driving drop dropped drug drugs dry dude duty earlier easier easily eastern
    eating economy ed edge edition effective effects effort efforts electric emergency employees ended ends
    engine engineering enter entered entirely environment episode equipment established estate evening
    eventually everybody evil ex excellent exchange excited executive exist existing expected explain extra
    extremely facebook facts failed failure fair faith families famous fan fantastic farm fashion fat favorite
    fear feature features feelings feels feet fell fellow festival fifth fighting figures file finding finish
    finished firm fish fit fix flat flight floor florida fly flying follows foot forced forces forever forms
    foundation fourth france frank freedom fresh friday fuel fully function fund funds gain garden generally
    generation german germany gift glad glass global goals google gotta governor grade grand greater greatest
    grow growing guard guide gun hall handle happening happens harry healthy hearing heat heavy hello helped
    helping helps henry herself highest highly hill holding holy honest horse host hotel houses housing http
    hundred hurt ideas ill image images imagine immediately impact impossible improve inc includes income
    increased indeed independent indian individuals influence initial injury institute insurance interested
    interview introduced investigation investment iron israel issued items jack japan japanese jesus jobs joe
    johnson joined jones journal judge justice keeping kick kid killing knowing knowledge labor lack lady lake
    larger largest latest laws leader leaders leadership learned learning leaves leaving lee length letter
    levels library lie lies liked likes lines link links literally lived located location los losing lots louis
    lovely luck lucky machine mad magazine magic mail majority male managed manager map marketing marriage
    martin mary mass massive master material materials matters meaning meant medicine memory mental mention
    mentioned metal method mexico mid mike minute missed mission mobile models monday mostly mountain mouth
    movement movies mrs multiple murder named names nation nations nature necessary negative neither net nine
    nobody none northern notes notice nuclear numbers obama obviously offered offers officers older onto opened
    opening operating operation operations opinion opportunity option ordered orders organization otherwise
    overall owned owner pair paris parliament particularly parties partner passed patient patients paying peter
    photo photos physical picked pictures pieces placed plane planning plant plays plenty plus politics pop port
    positive possibly posted powerful pre prepared presence presented prevent previously prices primary prime
    prince prior prison pro produce produced product professor profile programs progress projects proper protect
    protection proud prove provides providing pull purpose push putting quarter queen quick raise raised ran
    rare rates reach reached reaction reality realize reasons receive records reduce reference regional regular
    religion religious remain remains removed reports request require resources responsibility responsible
    returned rich richard ride ring rise robert roll rose royal rule runs russia sad safety sale san saturday
    scale scene score scott screen search seat seconds secret secretary seemed sell selling senate senior
    separate seriously serve served session setting sexual shape ship shoot shooting shop showed showing shown
    shut sick sides signed significant silver sister sit sites sitting skills skin sky slightly slow smaller
    smart smith software sold solid solution somebody somewhere songs soul sounds sources southern spanish
    speaking species speech spend spirit sport sports spot spread spring square standards standing stars starts
    stated statement status steps stick stock stone stopped stories strategy strength stress structure studies
    stupid subject successful suggest sun sunday supply supposed surface surprise sweet target taste tea teacher
    teachers teaching teams technical television telling tells texas theory therefore thinks thomas thoughts
    thousands throughout throw thus till tom totally touch tough tour toward traditional traffic train transfer
    treat tree trial trip trouble truly trump turns twice twitter types understanding unique unit units unless
    upper usa useful users uses valley van variety vehicle victory videos views village violence volume vs wake
    walking waste watched weapons wear wearing weather web wedding weekend weird welcome wide wild william
    willing wind window windows wine winner winning winter wonder wonderful wood workers worry worse worst wow
    yesterday youth zone
    """,
}


class _Lazy:
    """Tables built on first use: `memdir index` and friends import this module without paying for them."""

    prior: ClassVar[dict[str, float] | None] = None
    glossaries: ClassVar[dict[tuple[tuple[str, ...], ...], dict[str, dict[str, tuple[str, float]]]]] = {}


def _prior() -> dict[str, float]:
    if _Lazy.prior is None:
        prior: dict[str, float] = {}
        for weight, words in _COMMON_WORDS.items():
            for word in words.split():
                for term in term_list(word):
                    prior[term] = min(prior.get(term, 1.0), weight)
        _Lazy.prior = prior
    return _Lazy.prior


# Everyday work vocabulary that tasks and memories put in different words or languages: one group per
# `;`, each a concept with its common English synonyms and its usual words in German, Spanish, French
# and Chinese (base forms; the stemmer meets plurals and most inflections). The concepts are the
# general ones of software work and running a small business, chosen as a list of such concepts and
# not from any folder's words; a folder's own vocabulary (product names, people, jargon) belongs in
# `recall.synonyms` in its config.
_GLOSSARY = """
    deploy, release, ship, rollout, launch, go live, ausrollen, veröffentlichen, desplegar, lanzar, déployer,
        publier, 部署, 发布, 上线;
    bug, error, defect, crash, Fehler, Absturz, fallo, error, erreur, bogue, 错误, 故障;
    test, testing, QA, testen, prueba, probar, tester, 测试;
    database, DB, Datenbank, base de datos, base de données, 数据库;
    backup, Sicherung, copia de seguridad, sauvegarde, 备份;
    server, host, Server, servidor, serveur, 服务器;
    password, secret, credential, token, API key, Passwort, Zugangsdaten, contraseña, credencial, mot de passe,
        密码, 密钥;
    documentation, docs, manual, guide, Dokumentation, Anleitung, Handbuch, documentación, guía, 文档, 手册;
    review, Überprüfung, prüfen, revisión, revisar, relecture, relire, 审查, 评审;
    approval, approve, sign-off, permission, Freigabe, Genehmigung, genehmigen, aprobación, aprobar,
        approbation, approuver, 批准, 审批;
    meeting, call, appointment, Besprechung, Termin, reunión, llamada, cita, réunion, appel, rendez-vous, 会议,
        电话;
    deadline, due date, due, Frist, fällig, plazo, fecha límite, échéance, date limite, 截止, 期限;
    schedule, calendar, Zeitplan, Kalender, calendario, horario, calendrier, 日程, 日历;
    holiday, vacation, time off, Urlaub, Feiertag, vacaciones, vacances, congé, 假期;
    colleague, coworker, Kollege, colega, compañero, collègue, 同事;
    manager, boss, Chef, Vorgesetzter, jefe, responsable, patron, 经理, 老板;
    owner, Inhaber, Eigentümer, dueño, propietario, propriétaire, 所有者;
    customer, client, Kunde, cliente, 客户, 顾客;
    supplier, vendor, Lieferant, Anbieter, proveedor, fournisseur, 供应商;
    order, purchase, buy, bestellen, Bestellung, kaufen, pedido, comprar, commande, commander, acheter, 订单, 购买;
    delivery, shipping, shipment, Lieferung, Versand, entrega, envío, livraison, 交货, 发货;
    invoice, bill, billing, Rechnung, factura, facture, 发票;
    payment, pay, zahlen, Zahlung, pagar, pago, payer, paiement, 付款, 支付;
    price, cost, fee, Preis, Kosten, Gebühr, precio, coste, tarifa, prix, coût, tarif, 价格, 费用;
    tax, VAT, Steuer, Umsatzsteuer, impuesto, IVA, impôt, TVA, 税务, 增值税;
    accountant, bookkeeping, Steuerberater, Buchhaltung, contable, contabilidad, comptable, comptabilité, 会计;
    receipt, Beleg, Quittung, recibo, reçu, 收据;
    bank, bank account, Bank, Konto, banco, cuenta bancaria, banque, 银行;
    budget, Budget, presupuesto, 预算;
    contract, agreement, Vertrag, Vereinbarung, contrato, acuerdo, contrat, 合同, 协议;
    hire, recruit, einstellen, Stellenanzeige, contratar, recruter, embaucher, 招聘;
    email, e-mail, mail, E-Mail, correo, courriel, 邮件;
    message, chat, Nachricht, mensaje, 消息;
    letter, Brief, Schreiben, carta, lettre, 信函;
    report, Bericht, informe, rapport, 报告;
    translate, translation, übersetzen, Übersetzung, traducir, traducción, traduire, traduction, 翻译;
    English, Englisch, inglés, anglais, 英语;
    German, Deutsch, alemán, allemand, 德语;
    Spanish, Spanisch, español, espagnol, 西班牙语;
    French, Französisch, francés, français, 法语;
    Chinese, Chinesisch, chino, chinois, 中文;
    week, weekly, Woche, wöchentlich, semana, semanal, semaine, hebdomadaire, 每周;
    month, monthly, Monat, monatlich, mes, mensual, mois, mensuel, 每月;
    year, yearly, annual, Jahr, jährlich, año, anual, année, annuel, 每年;
    shop, store, Laden, Geschäft, tienda, magasin, boutique, 商店;
    website, web page, site, Webseite, Website, sitio web, página web, site web, 网站;
    app, application, App, aplicación, 应用;
    newsletter, Newsletter, boletín, 通讯;
"""


def _glossary(extra: tuple[tuple[str, ...], ...]) -> dict[str, dict[str, tuple[str, float]]]:
    """term -> {synonym term: (a word it stands for, weight)}, from the built-in glossary (weight
    _SYNONYM_WEIGHT: general synonyms are weaker evidence than the word itself) plus `extra`, the
    folder's own `recall.synonyms` (weight 1: the folder's owner says they mean the same)."""
    if extra not in _Lazy.glossaries:
        built_in = [(group.split(","), _SYNONYM_WEIGHT) for group in _GLOSSARY.split(";") if group.strip()]
        groups = built_in + [(list(group), 1.0) for group in extra]
        synonyms: dict[str, dict[str, tuple[str, float]]] = defaultdict(dict)
        for group, weight in groups:
            keys: dict[str, str] = {}
            for phrase in (p.strip() for p in group):
                terms = term_list(phrase)
                if terms and is_cjk(terms[0]):
                    if len(phrase) == 2:  # a two-character word is one bigram term; longer ones would be several
                        keys.setdefault(phrase, phrase)
                elif len(terms) == 1:
                    keys.setdefault(terms[0], phrase)
                    if head := _compound_head(phrase):
                        keys.setdefault(head, phrase)
                elif len(terms) == 2:
                    keys.setdefault(_pairs(terms)[0], phrase)
            for key in keys:
                synonyms[key].update({other: (word, weight) for other, word in keys.items() if other != key})
        _Lazy.glossaries[extra] = dict(synonyms)
    return _Lazy.glossaries[extra]


def _compound_head(word: str) -> str | None:
    """The term of a longer word that starts with `word`, when it is not `word`'s own term. The stemmer
    cuts a long word to six letters, so a German compound ("Steuerberatung") becomes "steuer", while
    "Steuer" alone first loses its ending and becomes "steu": without this the two would never meet."""
    tokens = list(term_sequence(word))
    if len(tokens) != 1 or len(tokens[0][1]) < 6 or is_cjk(tokens[0][0]):
        return None
    head = tokens[0][1][:6]
    return head if head != tokens[0][0] else None


@dataclass(frozen=True)
class _Slot:
    """One query term, with the terms that count for it (itself, synonyms) and what each weighs."""

    shown: str  # the query's own word(s)
    alternatives: dict[str, tuple[float, str]]  # term -> (weight, word shown when it is what matched)
    # A name the best matches lend (see _neighbours) counts only in other memories' heads: a memory
    # whose name or description carries it is about it, one that mentions it in passing is not.
    heads_only: bool = False
    lenders: frozenset[int] = frozenset()  # and never for the memories that lent it


def _query_slots(query: str, extra_synonyms: tuple[tuple[str, ...], ...], synonyms: bool = True) -> list[_Slot]:
    prior, glossary = _prior(), _glossary(extra_synonyms)
    tokens = list(term_sequence(query))
    shown: dict[str, str] = {}
    for term, text in tokens:
        shown.setdefault(term, text)
    words = [term for term, _ in tokens if not is_cjk(term)]
    weights = {term: prior.get(term, 1.0) for term, _ in tokens if not (term.isdigit() and len(term) <= 2)}
    for a, b in itertools.pairwise(words):
        if a != b:
            weights.setdefault(f"{a}_{b}", max(prior.get(a, 1.0), prior.get(b, 1.0)))
            shown.setdefault(f"{a}_{b}", f"{shown[a]} {shown[b]}")
    slots = []
    for term, weight in weights.items():
        alternatives = {term: (weight, shown[term])}
        if synonyms and (head := _compound_head(shown[term])) and head not in weights:
            alternatives[head] = (weight * _SYNONYM_WEIGHT, f"{shown[term]}-")  # "Steuer" finds "Steuerberatung"
        if synonyms:
            for other, (word, factor) in glossary.get(term, {}).items():
                if other not in weights and other not in alternatives:
                    alternatives[other] = (weight * factor, word)
        slots.append(_Slot(shown[term], alternatives))
    return slots


# --- the index: what recall knows of each memory, kept in .memdir/ between runs --------------------


@dataclass(frozen=True)
class _Doc:
    """What recall needs of one memory besides its terms."""

    path: str
    name: str
    type: str
    description: str
    importance: float
    date: str  # ISO date of `updated` (else `created`...), "" when undated
    status: str
    superseded_by: str
    expires: str  # ISO date or ""
    successor: int  # index of the memory `superseded_by` names, -1 when none is found

    def to_json(self) -> list[Any]:
        return [getattr(self, name) for name in _DOC_FIELDS]

    @classmethod
    def from_json(cls, row: list[Any]) -> _Doc:
        return cls(*row)

    def exclusion(self, today: dt.date) -> str | None:
        expires = dt.date.fromisoformat(self.expires) if self.expires else None
        return exclusion(self.status, bool(self.superseded_by), expires, today)


_DOC_FIELDS = tuple(_Doc.__dataclass_fields__)
Posting = tuple[int, int, int]  # memory, times in its head, times in its body


class _Index:
    """The terms of every memory and the statistics BM25F needs. `_Built` holds them in memory as a run
    builds them, `_Stored` reads them from the index file; both answer through these methods."""

    n: int
    average_head: float
    average_body: float
    # (path, why) of the files that could not be read as memories, so nothing searched is silently
    # missing: what the index met while loading, then (load_index) what the listing found.
    unreadable: list[tuple[str, str]]

    def postings(self, term: str) -> list[Posting]:
        """The memories containing `term`; a pair "a_b" is found by checking adjacency in the memories
        that contain both words, so pairs need no room in the index."""
        if "_" not in term:
            return self._postings(term)
        first, second = term.split("_", 1)
        both = {i for i, _, _ in self._postings(first)} & {i for i, _, _ in self._postings(second)}
        found = []
        for i in sorted(both):
            head, body = self.terms(i)
            in_head, in_body = _adjacent(head, first, second), _adjacent(body, first, second)
            if in_head or in_body:
                found.append((i, in_head, in_body))
        return found

    def weight(self, i: int, in_head: int, in_body: int) -> float:
        """BM25F's saturated term frequency of a term found `in_head` and `in_body` times in memory i."""
        head_length, body_length = self.lengths(i)
        tf = _HEAD_WEIGHT * in_head / (1 - _HEAD_B + _HEAD_B * head_length / self.average_head)
        tf += _BODY_WEIGHT * in_body / (1 - _BODY_B + _BODY_B * body_length / self.average_body)
        return tf * (_K1 + 1) / (tf + _K1)

    @property
    def idf_max(self) -> float:
        return _idf(1, self.n)

    def _postings(self, term: str) -> list[Posting]:
        raise NotImplementedError

    def df(self, term: str) -> int:
        """How many memories contain the word `term` (not a pair)."""
        return len(self._postings(term))

    def terms(self, i: int) -> tuple[list[str], list[str]]:
        raise NotImplementedError

    def lengths(self, i: int) -> tuple[int, int]:
        raise NotImplementedError

    def doc(self, i: int) -> _Doc:
        raise NotImplementedError


def _adjacent(terms: Sequence[str], first: str, second: str) -> int:
    words = [t for t in terms if not is_cjk(t)]
    return sum(1 for a, b in itertools.pairwise(words) if a == first and b == second)


class _Built(_Index):
    """The index of a folder as this process built it (from the files, the parse cache and the old index)."""

    def __init__(
        self,
        docs: list[_Doc],
        terms: list[tuple[list[str], list[str]]],
        files: list[list[Any]],
        unreadable: list[tuple[str, str]],
    ) -> None:
        self.docs, self.term_lists, self.files = docs, terms, files  # files: [rel, key or None, doc or -1]
        self.unreadable = unreadable
        self.n = len(docs)
        self.average_head = _average(len(h) for h, _ in terms)
        self.average_body = _average(len(b) for _, b in terms)
        table: dict[str, list[Posting]] = defaultdict(list)
        for i, (head, body) in enumerate(terms):
            in_head, in_body = _count(head), _count(body)
            for term in in_head.keys() | in_body.keys():
                table[term].append((i, in_head.get(term, 0), in_body.get(term, 0)))
        self.table = dict(table)

    def _postings(self, term: str) -> list[Posting]:
        return self.table.get(term, [])

    def terms(self, i: int) -> tuple[list[str], list[str]]:
        return self.term_lists[i]

    def lengths(self, i: int) -> tuple[int, int]:
        head, body = self.term_lists[i]
        return len(head), len(body)

    def doc(self, i: int) -> _Doc:
        return self.docs[i]

    def encode(self, digest: str) -> bytes:
        """The index file: a magic line, a header, then sections the reader finds by their sizes."""
        from memdir.version import __version__

        def lines(rows: Iterable[Any]) -> tuple[bytes, list[int]]:
            encoded = [json.dumps(row, ensure_ascii=True, separators=(",", ":")).encode() + b"\n" for row in rows]
            return b"".join(encoded), list(itertools.accumulate((len(line) for line in encoded), initial=0))[:-1]

        files = json.dumps(self.files, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"
        terms, term_offsets = lines(" ".join(h) + "\t" + " ".join(b) for h, b in self.term_lists)
        docs, doc_offsets = lines(doc.to_json() for doc in self.docs)
        lengths = [n for head, body in self.term_lists for n in (len(head), len(body))]
        tables = json.dumps([term_offsets, doc_offsets, lengths], separators=(",", ":")).encode() + b"\n"
        postings = "".join(
            f"{term}\t{' '.join(f'{i}:{h}:{b}' for i, h, b in self.table[term])}\n"
            for term in sorted(self.table, key=str.encode)
        ).encode()
        sections = [files, terms, docs, tables, postings]
        header = {
            "memdir": __version__,
            "digest": digest,
            "n": self.n,
            "average": [self.average_head, self.average_body],
            "sizes": [len(s) for s in sections],
            "unreadable": self.unreadable,
        }
        return b"".join([_MAGIC, json.dumps(header, separators=(",", ":")).encode(), b"\n", *sections])


def _average(lengths: Iterable[int]) -> float:
    """A field's average length for BM25's length norm; 1.0 when there is nothing to average or every
    field is empty (a folder of memories without bodies), which would otherwise divide by zero. Any
    non-zero value does: an empty field has no terms to weigh."""
    counted = list(lengths)
    return sum(counted) / len(counted) if counted and any(counted) else 1.0


def _count(terms: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for term in terms:
        counts[term] += 1
    return counts


_MAGIC = b"memdir recall index 3\n"  # bump when what is stored or how terms are made changes


class _Stored(_Index):
    """An index file as `_Built.encode` wrote it, mapped into memory and searched in place.

    Postings lines are sorted by term, so a query term is found by binary search over the bytes, and
    only the lines a query needs, and the memories that match, are ever decoded."""

    def __init__(self, data: mmap.mmap | bytes, header: dict[str, Any], start: int) -> None:
        self.data = data
        self.n = int(header["n"])
        self.average_head, self.average_body = (float(x) or 1.0 for x in header["average"])
        self.unreadable = [(str(path), str(why)) for path, why in header["unreadable"]]
        bounds = list(itertools.accumulate(header["sizes"], initial=start))
        self.files_at, self.terms_at, self.docs_at, self.tables_at, self.postings_at, self.end = bounds
        if self.end != len(data):
            raise ValueError("truncated recall index")
        self._tables: tuple[list[int], list[int], list[int]] | None = None
        self._docs: dict[int, _Doc] = {}

    @classmethod
    def read(cls, path: Path) -> tuple[_Stored, str]:
        """The index at `path` and the digest it was built for. Raises OSError (NotRegularFile for a
        named pipe or the like, which must not be opened blocking) or ValueError."""
        from memdir.core.store import open_state_file
        from memdir.version import __version__

        with open_state_file(path) as handle:
            try:  # mapped, not read: a query touches a few pages of a file that may be megabytes
                data: mmap.mmap | bytes = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # an empty file, or a file system without mmap
                data = handle.read()
        if data[: len(_MAGIC)] != _MAGIC:
            raise ValueError("not a recall index")
        end = data.find(b"\n", len(_MAGIC))
        header = json.loads(data[len(_MAGIC) : end])
        if header.get("memdir") != __version__:
            raise ValueError("another version's index")
        return cls(data, header, end + 1), str(header["digest"])

    @property
    def tables(self) -> tuple[list[int], list[int], list[int]]:
        if self._tables is None:
            term_offsets, doc_offsets, lengths = json.loads(self.data[self.tables_at : self.postings_at])
            self._tables = term_offsets, doc_offsets, lengths
        return self._tables

    def _postings(self, term: str) -> list[Posting]:
        found = self._line(term)
        if found is None:
            return []
        out = []
        for posting in self.data[found[0] : found[1]].split():
            i, h, b = posting.split(b":")
            out.append((int(i), int(h), int(b)))
        return out

    def df(self, term: str) -> int:
        found = self._line(term)
        return 0 if found is None else self.data[found[0] : found[1]].count(b" ") + 1  # no decoding

    def _line(self, term: str) -> tuple[int, int] | None:
        """Where the postings of `term` are in the file (a binary search of its sorted lines), if there."""
        key, data = term.encode(), self.data
        lo, hi = self.postings_at, self.end
        while lo < hi:  # lo is always the start of a line
            mid = (lo + hi) // 2
            start = data.rfind(b"\n", lo, mid) + 1 or lo
            stop = data.find(b"\n", start, self.end)
            tab = data.find(b"\t", start, stop)
            found = data[start:tab]
            if found == key:
                return tab + 1, stop
            if found < key:
                lo = stop + 1
            else:
                hi = start
        return None

    def terms(self, i: int) -> tuple[list[str], list[str]]:
        start = self.terms_at + self.tables[0][i]
        head, _, body = json.loads(self.data[start : self.data.find(b"\n", start)]).partition("\t")
        return head.split(), body.split()

    def lengths(self, i: int) -> tuple[int, int]:
        lengths = self.tables[2]
        return lengths[2 * i], lengths[2 * i + 1]

    def doc(self, i: int) -> _Doc:
        if i not in self._docs:
            start = self.docs_at + self.tables[1][i]
            self._docs[i] = _Doc.from_json(json.loads(self.data[start : self.data.find(b"\n", start)]))
        return self._docs[i]

    def reusable(self) -> dict[str, tuple[list[Any], _Doc | None, tuple[list[str], list[str]] | None]]:
        """rel -> (key, doc, terms) of every file this index was built from, for an incremental rebuild."""
        out: dict[str, tuple[list[Any], _Doc | None, tuple[list[str], list[str]] | None]] = {}
        for rel, key, i in json.loads(self.data[self.files_at : self.terms_at]):
            if key is not None:
                out[rel] = (key, None, None) if i < 0 else (key, self.doc(i), self.terms(i))
        return out


def _idf(df: int, n: int) -> float:
    """BM25's IDF, with a folder of fewer than _MIN_FOLDER memories counted as that many: in a folder
    of three, a word in two of them is not common, only unlucky; the general-language prior is what
    says how common a word is there."""
    n = max(n, _MIN_FOLDER)
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _doc_of(memory: Memory) -> tuple[_Doc, tuple[list[str], list[str]]]:
    date = memory.last_changed
    doc = _Doc(
        path=memory.path,
        name=memory.title,
        type=memory.type.value if memory.type else "",
        description=memory.description,
        importance=memory.importance,
        date=date.isoformat() if date else "",
        status=memory.status,
        superseded_by=" ".join(str(memory.fields.get("superseded_by") or "").split()),
        expires=memory.expires.isoformat() if memory.expires else "",
        successor=-1,
    )
    return doc, (term_list(f"{memory.name}\n{memory.description}"), term_list(memory.body))


def _link_successors(docs: list[_Doc]) -> list[_Doc]:
    """Resolve each `superseded_by` (a file name, path or memory name) to the memory it names."""
    if not any(doc.superseded_by for doc in docs):
        return docs
    by_key: dict[str, int] = {}
    for i, doc in enumerate(docs):  # least specific first, so that a path beats a name
        by_key.setdefault(f"name:{name_key(doc.name)}", i)
        by_key.setdefault(f"stem:{Path(doc.path).stem}", i)
        by_key.setdefault(f"file:{Path(doc.path).name}", i)
    for i, doc in enumerate(docs):
        by_key[f"path:{doc.path}"] = i
    linked = []
    for doc in docs:
        successor = -1
        if doc.superseded_by:
            wanted = doc.superseded_by.removeprefix("./")
            keys = (f"path:{wanted}", f"file:{Path(wanted).name}", f"stem:{Path(wanted).stem}")
            for key in (*keys, f"name:{name_key(wanted)}"):
                if key in by_key:
                    successor = by_key[key]
                    break
        linked.append(doc if successor == doc.successor else replace(doc, successor=successor))
    return linked


Listed = list[tuple[str, str, list[int] | None]]  # (rel, path, key) of each file; key None: could not stat


def _listed(root: Path) -> tuple[Listed, list[tuple[str, str]]]:
    """Every candidate memory file, as `scan` lists them, with its key (size, mtime, ctime, inode); and
    the entries that are problems in themselves (a symlink out of the folder, a named pipe)."""
    out: Listed = []
    problems: list[tuple[str, str]] = []
    for item in list_files(root):
        if isinstance(item, FileProblem):
            problems.append((item.path, item.message))
            continue
        rel, path = item
        try:
            status = os.stat(path, follow_symlinks=False)
            out.append((rel, path, [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]))
        except OSError:
            out.append((rel, path, None))
    return out, problems


def _digest(listed: Listed) -> str:
    text = "".join(f"{rel}\0{key}\n" for rel, _, key in listed)
    return hashlib.sha1(text.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()


def load_index(folder: MemoryDir) -> _Index:
    """The recall index of `folder`: from `.memdir/recall-index` when no file changed since it was
    written, else rebuilt (re-reading only the files that changed) and written back. With the folder's
    cache off, built from the files and not written."""
    listed, listing_problems = _listed(folder.root)
    digest = _digest(listed)
    path = (state_dir(folder.root) if folder.cache else folder.root / STATE_DIR) / INDEX_FILE
    old: _Stored | None = None
    if folder.cache:
        try:
            old, old_digest = _Stored.read(path)
            if old_digest == digest:
                old.unreadable = listing_problems + old.unreadable
                return old
        except (OSError, ValueError, LookupError, TypeError):
            old = None  # missing, corrupt or another version's: rebuilt below
    built = _build(folder, listed, old)
    if folder.cache:
        # A file changed in the last moments could change again without its key changing: it is
        # recorded as untrusted, so the next run reads it again (as the parse cache does).
        racy_after = time.time_ns() - int(RACY_SECONDS * 1e9)
        for entry in built.files:
            if entry[1] is not None and entry[1][1] > racy_after:
                entry[1] = None
        stable = [(rel, "", key) for rel, key, _ in built.files]
        try:
            ensure_state_dir(folder.root)
            write_state_file(path, built.encode(_digest(stable)))
        except OSError:
            pass  # a read-only folder: recall works, it only rebuilds each time
    built.unreadable = listing_problems + built.unreadable
    return built


def _build(folder: MemoryDir, listed: Listed, old: _Stored | None) -> _Built:
    try:
        reusable = old.reusable() if old is not None else {}
        known = dict(old.unreadable) if old is not None else {}
    except (ValueError, LookupError, TypeError):
        reusable, known = {}, {}
    cache = ParseCache.load(state_dir(folder.root)) if folder.cache else ParseCache.disabled()
    docs: list[_Doc] = []
    terms: list[tuple[list[str], list[str]]] = []
    files: list[list[Any]] = []
    unreadable: list[tuple[str, str]] = []
    with paused_gc():  # many small acyclic objects: terms, rows
        for rel, path, key in listed:
            kept = reusable.get(rel)
            doc: _Doc | None = None
            doc_terms: tuple[list[str], list[str]] | None = None
            if key is not None and kept is not None and kept[0] == key:
                doc, doc_terms = kept[1], kept[2]
                if rel in known:
                    unreadable.append((rel, known[rel]))
            else:
                loaded = load_file(path, rel, cache)
                if isinstance(loaded, Memory) and loaded.type is not None:  # what the index would list
                    doc, doc_terms = _doc_of(loaded)
                elif isinstance(loaded, FileProblem) and loaded.unreadable:
                    unreadable.append((rel, loaded.message))
            if doc is None or doc_terms is None:
                files.append([rel, key, -1])
                continue
            files.append([rel, key, len(docs)])
            docs.append(doc)
            terms.append(doc_terms)
        cache.save()
        return _Built(_link_successors(docs), terms, files, unreadable)


# --- scoring -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recalled:
    """One memory as recall scored it."""

    path: str  # relative to the folder
    name: str
    type: str
    description: str
    score: float  # w_rel x relevance + w_rec x recency + w_imp x importance
    relevance: float  # 0..1
    recency: float  # 0..1: 1 today, 0.5 one half-life ago; 0 when undated
    importance: float  # 0..1, 0.5 when not set
    matched: tuple[str, ...] = ()  # the query's words that matched ("ship=deploy": through a synonym)
    via: str | None = None  # the superseded memory whose match this memory inherits
    direct: float = 0.0  # the relevance from the query's own words and synonyms: what the gate weighs

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "path": self.path,
            "type": self.type,
            "score": round(self.score, 4),
            "relevance": round(self.relevance, 4),
            "recency": round(self.recency, 4),
            "importance": round(self.importance, 4),
        }
        if explain:
            out |= {"description": self.description, "matched": list(self.matched), "via": self.via,
                    "direct": round(self.direct, 4)}  # fmt: skip
        return out


@dataclass(frozen=True)
class RecallResult:
    """What one recall chose, everything it weighed, and where it was logged."""

    query: str
    results: list[Recalled]  # chosen, best first
    candidates: list[Recalled]  # every live memory with some relevance, best first (chosen ones too)
    excluded: list[tuple[str, str]]  # (path, why) of memories that matched but may not be recalled
    top_relevance: float  # the best candidate's relevance
    passed_gate: bool  # whether top_relevance reached the gate
    settings: RecallSettings
    method: str = "lexical"  # or "llm"
    k: int = 5
    min_score: float = 0.0
    llm: dict[str, Any] | None = None  # for method "llm": model, names picked, names not found
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, why) of files not searched
    already: frozenset[str] = frozenset()  # paths in the reader's context already (pinned): never chosen
    log_path: Path | None = None
    log_error: str | None = None  # why the log could not be written (recall itself went on)

    def why_not(self, candidate: Recalled) -> str | None:
        """Why a candidate was not chosen; None when it was."""
        if any(r.path == candidate.path for r in self.results):
            return None
        if candidate.path in self.already:
            return "already in the context: pinned"
        if self.method == "llm":
            return "not picked by the model"
        if not self.passed_gate:
            return f"the best relevance, {self.top_relevance:.2f}, is below the gate {self.settings.gate:g}"
        if candidate.direct <= 0:
            return "no word of the query matches it, only names lent by the best matches"
        if candidate.relevance < self.settings.min_relevance:
            return f"relevance {candidate.relevance:.2f} below min-relevance {self.settings.min_relevance:g}"
        if candidate.score < self.min_score:
            return f"score {candidate.score:.2f} below min-score {self.min_score:g}"
        return f"not in the top {self.k}"


def _recency(date: str, today: dt.date, half_life: float) -> float:
    if not date:
        return 0.0
    age = (today - dt.date.fromisoformat(date)).days
    return float(0.5 ** (max(age, 0) / half_life))


def _bounded(score: float) -> float:
    """A normalised BM25F sum as a relevance in 0..1."""
    return 1 - math.exp(-score)


def _relevance(index: _Index, slots: Sequence[_Slot]) -> tuple[dict[int, float], dict[int, list[str]]]:
    """Normalised BM25F score of every memory that matches, and the query words it matched."""
    scores: dict[int, float] = defaultdict(float)
    matched: dict[int, list[str]] = defaultdict(list)
    for slot in slots:
        best: dict[int, tuple[float, str]] = {}  # per memory, the slot's best alternative
        for term, (weight, word) in slot.alternatives.items():
            postings = index.postings(term)
            if not postings:
                continue
            factor = weight * _idf(len(postings), index.n) / index.idf_max
            for i, in_head, in_body in postings:
                if slot.heads_only:
                    if not in_head or i in slot.lenders:
                        continue
                    in_body = 0
                value = factor * index.weight(i, in_head, in_body)
                if value > best.get(i, (0.0, ""))[0]:
                    best[i] = (value, slot.shown if word == slot.shown else f"{slot.shown}={word}")
        for i, (value, shown) in best.items():
            scores[i] += value
            matched[i].append(shown)
    return scores, matched


def _neighbours(index: _Index, slots: Sequence[_Slot], scores: dict[int, float]) -> list[_Slot]:
    """Query slots for the names the best matches carry: the rare words in their heads ("FieldSense",
    "Build Notes") that the query did not use. A task about the vineyard pilot is about FieldSense when
    the pilot's memory says so, and FieldSense's supplier and schematics bear on it too."""
    used = {term for slot in slots for term in slot.alternatives}
    prior, most = _prior(), min(_NEIGHBOUR_MOST, max(2, int(_NEIGHBOUR_SHARE * max(index.n, _MIN_FOLDER))))
    lent: dict[str, tuple[float, str]] = {}  # term -> (weight, the words it came from)
    lenders: dict[str, set[int]] = defaultdict(set)
    for i in heapq.nsmallest(_NEIGHBOUR_SOURCES, scores, key=lambda i: (-scores[i], i)):  # the best, in order
        share = _bounded(scores[i])  # a name is worth what its memory's match is worth
        doc = index.doc(i)
        words = dict(reversed(list(term_sequence(f"{doc.name}\n{doc.description}"))))
        head, _ = index.terms(i)
        for term in set(head):
            if term in used or is_cjk(term) or term.isdigit() or prior.get(term, 1.0) < 1:
                continue
            if 2 <= index.df(term) <= most:
                lenders[term].add(i)
                if share > lent.get(term, (0.0, ""))[0]:
                    lent[term] = (share, words.get(term, term))
    return [_Slot(f"~{word}", {term: (_NEIGHBOUR_WEIGHT * share, f"~{word}")}, True, frozenset(lenders[term]))
            for term, (share, word) in sorted(lent.items())]  # fmt: skip


def _score(
    index: _Index,
    query: str,
    settings: RecallSettings,
    today: dt.date,
    synonyms: bool = True,
    successors: bool = True,
    neighbours: bool = True,
) -> tuple[list[Recalled], list[tuple[str, str]]]:
    """Every live memory with some relevance to `query`, best first, and the excluded ones that matched."""
    slots = _query_slots(query, settings.synonyms, synonyms)
    direct, matched = _relevance(index, slots)
    scores = dict(direct)
    if neighbours and direct and _bounded(max(direct.values())) >= settings.gate:
        lent, lent_matched = _relevance(index, _neighbours(index, slots, direct))
        for i, value in lent.items():
            scores[i] = scores.get(i, 0.0) + value
            matched[i].extend(lent_matched[i])
    live: dict[int, tuple[float, float, int]] = {}  # memory -> (score, its direct part, inherited from or -1)
    excluded: list[tuple[str, str]] = []
    for i, value in scores.items():
        doc = index.doc(i)
        why = doc.exclusion(today)
        if why is None:
            if value > live.get(i, (0.0, 0.0, -1))[0]:
                live[i] = (value, direct.get(i, 0.0), -1)
            continue
        excluded.append((doc.path, why))
        successor, seen = doc.successor, {i}
        while successors and successor >= 0 and successor not in seen:  # follow a chain of replacements
            seen.add(successor)
            following = index.doc(successor)
            if following.exclusion(today) is None:
                inherited = _SUCCESSOR_SHARE * value
                if inherited > live.get(successor, (0.0, 0.0, -1))[0]:
                    live[successor] = (inherited, _SUCCESSOR_SHARE * direct.get(i, 0.0), i)
                break
            successor = following.successor
    out = []
    for i, (value, own, via) in live.items():
        doc = index.doc(i)
        relevance = _bounded(value)
        recency = _recency(doc.date, today, settings.half_life_days)
        score = (
            settings.relevance_weight * relevance
            + settings.recency_weight * recency
            + settings.importance_weight * doc.importance
        )
        words = tuple(matched[i] if via < 0 else matched[via])
        out.append(Recalled(doc.path, doc.name, doc.type, doc.description, score, relevance, recency, doc.importance,
                            words, index.doc(via).path if via >= 0 else None, _bounded(own)))  # fmt: skip
    out.sort(key=lambda r: (-r.score, -r.relevance, r.path))
    excluded.sort()
    return out, excluded


# --- recall --------------------------------------------------------------------------------------


def recall(
    folder: MemoryDir,
    query: str,
    *,
    k: int | None = None,
    min_score: float | None = None,
    settings: RecallSettings | None = None,
    log: bool | None = None,
    already: Iterable[str] = (),
) -> RecallResult:
    """The memories of `folder` most worth bringing up for `query`, best first (at most `k`).

    `settings` default to the folder's config (`[recall]`); `k` and `min_score` override theirs. Nothing
    is returned when the query's best match is below the relevance gate. `already` names memories the
    reader has in full anyway (the pinned ones of a context): they are never chosen, so they take no
    slot. The recall is appended to `.memdir/recall.jsonl` unless `log` (default: the `recall.log`
    setting) is false.
    """
    settings = settings or folder.config.recall
    k = settings.k if k is None else k
    min_score = settings.min_score if min_score is None else min_score
    _check(query, k)
    index = load_index(folder)
    candidates, excluded = _score(index, query, settings, folder.today)
    skip = frozenset(already)
    chosen, top, passed = _choose(candidates, settings, k, min_score, skip)
    result = RecallResult(query, chosen, candidates, excluded, top, passed, settings, "lexical", k, min_score,
                          unreadable=index.unreadable, already=skip)  # fmt: skip
    return _logged(folder, result, settings.log if log is None else log)


def _check(query: str, k: int) -> None:
    if not query.strip():
        raise RecallError("the query is empty: say what the task is")
    if k < 1:
        raise RecallError("k must be at least 1")


def _choose(
    candidates: Sequence[Recalled],
    settings: RecallSettings,
    k: int,
    min_score: float,
    skip: frozenset[str] = frozenset(),
) -> tuple[list[Recalled], float, bool]:
    """The gates and the cut: (chosen, best relevance, whether it reached the gate). The gate weighs every
    candidate; those in `skip` (already in the reader's context) are never chosen."""
    top = max((c.direct for c in candidates), default=0.0)
    if top <= 0 or top < settings.gate:
        return [], top, False
    chosen = [
        c
        for c in candidates
        if c.path not in skip and c.direct > 0 and c.relevance >= settings.min_relevance and c.score >= min_score
    ]
    return chosen[:k], top, True


def _logged(folder: MemoryDir, result: RecallResult, log: bool) -> RecallResult:
    if not log:
        return result
    try:
        return replace(result, log_path=write_log(folder.root, result))
    except OSError as exc:
        return replace(result, log_error=f"{exc.strerror or exc}: {exc.filename or folder.root / STATE_DIR}")


def log_entry(result: RecallResult) -> dict[str, Any]:
    """The line `.memdir/recall.jsonl` gets for `result`: enough to answer "why did the agent bring that
    up?" (and "why not that one?") without re-running anything."""
    settings = result.settings
    chosen = {r.path for r in result.results}
    logged = result.candidates[:LOG_CANDIDATES] + [c for c in result.candidates[LOG_CANDIDATES:] if c.path in chosen]
    entry: dict[str, Any] = {
        "time": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "query": result.query,
        "method": result.method,
        "settings": {
            "weights": {
                "relevance": settings.relevance_weight,
                "recency": settings.recency_weight,
                "importance": settings.importance_weight,
            },
            "half_life_days": settings.half_life_days,
            "gate": settings.gate,
            "min_relevance": settings.min_relevance,
            "min_score": result.min_score,
            "k": result.k,
        },
        "top_relevance": round(result.top_relevance, 4),
        "passed_gate": result.passed_gate,
        "chosen": [r.path for r in result.results],
        "candidates": [c.to_json(explain=True) | {"why_not": result.why_not(c)} for c in logged],
        "candidates_total": len(result.candidates),
        "excluded": [{"path": path, "why": why} for path, why in result.excluded[:LOG_CANDIDATES]],
    }
    if result.llm is not None:
        entry["llm"] = result.llm
    return entry


def write_log(root: Path, result: RecallResult) -> Path:
    """Append `result` to `<root>/.memdir/recall.jsonl` (one JSON object a line, secrets masked) and return its path.

    One write() of one line in append mode, so concurrent recalls never interleave within a line. Past
    store.LOG_MAX_BYTES (10 MiB) the log is renamed to recall.jsonl.1 (replacing an older one) and starts afresh."""
    path = ensure_state_dir(root) / LOG_FILE
    # The query and the candidates' descriptions are free text: no key is copied into the log.
    line = (dumps(log_entry(result), indent=None, compact=True) + "\n").encode("utf-8")
    rotate_log(path, len(line))
    append_lines(path, line)
    return path


def read_log(root: Path) -> list[dict[str, Any]]:
    """The recalls logged in `<root>/.memdir/recall.jsonl`, oldest first (unreadable lines skipped)."""
    return read_jsonl(state_dir(root) / LOG_FILE)


def recalled_memories(folder: MemoryDir, result: RecallResult) -> list[Memory]:
    """The chosen memories, read from their files (e.g. for `render_context(recalled=...)`); a file that
    changed into something that is not a memory since it was recalled is skipped."""
    out = []
    for chosen in result.results:
        loaded = load_file(str(folder.root / chosen.path), chosen.path, ParseCache.disabled())
        if isinstance(loaded, Memory):
            out.append(loaded)
    return out


# --- recall through a model ------------------------------------------------------------------------

SELECT_TOOL = "select_memories"
MANIFEST_MAX = 200  # memories shown to the model, most recently changed first (Claude Code's own cap)
_LLM_SYSTEM = (
    "You pick which of a user's saved memories an AI assistant should read before it works on the "
    "user's request. You get the request and a manifest: one line per memory, its file name, type and a "
    "one-line description. Call select_memories with the file names of the memories that will clearly "
    "help with this request, most useful first. Pick only memories you are confident are relevant; if "
    "none is, pick none. Rules and preferences that constrain how the request must be done count as "
    "relevant even when they share no words with it."
)


def recall_llm(
    folder: MemoryDir,
    query: str,
    *,
    k: int | None = None,
    settings: RecallSettings | None = None,
    client: Any = None,
    model: str | None = None,
    log: bool | None = None,
) -> RecallResult:
    """Recall the way Claude Code does: one forced tool call in which a model picks up to `k` memories
    (5 by default) from the folder's manifest. Their relevance is 1 (picked); recency and importance are
    computed as usual, and the model's order is kept.

    `client` is an `anthropic.Anthropic` (tests pass one with a mock transport); by default one is made
    from ANTHROPIC_API_KEY. `model` defaults to the `recall.model` setting. Raises RecallError when there
    is no key or the API call fails.
    """
    settings = settings or folder.config.recall
    k = settings.k if k is None else k
    _check(query, k)
    model = model or settings.model
    client = client if client is not None else _default_client()
    index = load_index(folder)
    live = [doc for doc in (index.doc(i) for i in range(index.n)) if doc.exclusion(folder.today) is None]
    live.sort(key=lambda d: (d.date, d.path), reverse=True)
    shown, left_out = live[:MANIFEST_MAX], len(live) - MANIFEST_MAX
    picked: list[str] = []
    if shown:
        picked = _ask_model(client, model, query, shown, k)
    by_name: dict[str, _Doc] = {}
    for doc in shown:  # a model may answer with the path, the file name or the memory's name
        for key in (doc.path, Path(doc.path).name, doc.name, name_key(doc.name)):
            by_name.setdefault(key, doc)
    chosen: list[Recalled] = []
    unknown: list[str] = []
    for name in picked:
        found = by_name.get(name) or by_name.get(name_key(name))
        if found is None:
            unknown.append(name)
        elif all(c.path != found.path for c in chosen) and len(chosen) < k:
            doc = found
            recency = _recency(doc.date, folder.today, settings.half_life_days)
            score = settings.relevance_weight + settings.recency_weight * recency
            score += settings.importance_weight * doc.importance
            chosen.append(Recalled(doc.path, doc.name, doc.type, doc.description, score, 1.0, recency,
                                   doc.importance, ("picked by " + model,), None, 1.0))  # fmt: skip
    llm = {"model": model, "picked": picked, "unknown": unknown, "manifest": len(shown),
           "left_out_of_manifest": max(left_out, 0)}  # fmt: skip
    result = RecallResult(query, chosen, list(chosen), [], 1.0 if chosen else 0.0, bool(chosen), settings, "llm", k,
                          settings.min_score, llm, index.unreadable)  # fmt: skip
    return _logged(folder, result, settings.log if log is None else log)


def _manifest(docs: Iterable[_Doc]) -> str:
    return "\n".join(f"- {doc.path} ({doc.type}): {doc.description}" for doc in docs)


def _default_client() -> Any:
    """An Anthropic client from the environment; RecallError without a key, before any work is done."""
    try:
        return llm.make_client("`recall --llm`")
    except llm.NoApiKey as exc:
        raise RecallError(str(exc)) from None


def _ask_model(client: Any, model: str, query: str, docs: Sequence[_Doc], k: int) -> list[str]:
    tool = {
        "name": SELECT_TOOL,
        "description": "Select the memories that will clearly help with the request.",
        "input_schema": {
            "type": "object",
            "properties": {
                "selected": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": k,
                    "description": f"File names from the manifest, most useful first; at most {k}, or none.",
                }
            },
            "required": ["selected"],
        },
    }
    content = f"Request: {query}\n\nMemories:\n{_manifest(docs)}"
    try:
        data = llm.forced_tool_call(
            client, model=model, max_tokens=1024, system=_LLM_SYSTEM, content=content, tool=tool
        )
    except llm.LlmError as exc:
        raise RecallError(f"{exc}; nothing recalled") from None
    selected = data.get("selected")
    if not isinstance(selected, list):
        raise RecallError(f"the model's {SELECT_TOOL} call has no list of names; nothing recalled")
    return [name.strip() for name in selected if isinstance(name, str) and name.strip()]
