"""What a query word is worth: terms and pairs, the general-language prior, the glossary of
synonyms and translations, compound heads, and the slots a query becomes.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from memdir.text.lazyre import LazyPattern

# The terms duplicate detection uses, made the same way (and as fast).
from memdir.text.words import is_cjk, term_list, term_sequence

if TYPE_CHECKING:
    pass


_SYNONYM_WEIGHT = 0.5  # a synonym or translation is weaker evidence than the word itself


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

    glossaries: ClassVar[dict[tuple[tuple[str, ...], ...], dict[str, dict[str, tuple[str, float]]]]] = {}
    cjk_prior: ClassVar[dict[str, float] | None] = None


def general_prior() -> dict[str, float]:
    # Stemming the word lists takes longer than the rest of a prompt hook's recall, so the tables are
    # made once, by `make docs` (build_tables), and shipped; test_docs fails when they are stale.
    from memdir.read.tables import PRIOR

    return PRIOR


def build_prior() -> dict[str, float]:
    """term -> weight below 1 for the words common in any text (the general-language prior)."""
    prior: dict[str, float] = {}
    for weight, words in _COMMON_WORDS.items():
        for word in words.split():
            for term in term_list(word):
                prior[term] = min(prior.get(term, 1.0), weight)
    return prior


def _cjk_prior() -> dict[str, float]:
    """The prior's Chinese, Japanese and Korean half (common_cjk.py): pair term -> weight below 1. A
    two-character word is its own term as recall reads CJK text (test_recall holds every listed word to
    it), with nothing to stem, so it is read from the word list on the first query with CJK text instead
    of being shipped in tables.py, which every recall loads."""
    if _Lazy.cjk_prior is None:
        from memdir.read.common_cjk import COMMON_CJK

        # The bands run from the most common down, and a word is listed once: no minimum to take.
        _Lazy.cjk_prior = {word: weight for weight, words in COMMON_CJK.items() for word in words.split()}
    return _Lazy.cjk_prior


# Everyday work vocabulary that tasks and memories put in different words or languages: one group per
# `;`, each a concept with its common English synonyms and its usual words in German, Spanish, French
# and Chinese (base forms, the sense a general dictionary gives first; the stemmer meets plurals and most
# inflections). Where it comes from: a list of the general concepts of software work (building, testing,
# shipping and running software, its data and access) and of the work around it any team or freelancer
# has (people, clients, suppliers, orders, money, time, documents and languages), written as such a list,
# not from any folder's words. Issue 31 took out what had been chosen with the dev set's memories in
# view, which named exactly its German answers: the tax group (VAT, Umsatzsteuer), bookkeeping
# (Steuerberater), receipts (Beleg), letters (Brief) and a business's owner (Inhaber), "due"/"fällig",
# and "Stellenanzeige" (a job advert, no word for hiring). A folder's own vocabulary (product names,
# people, jargon, its trade's paperwork) belongs in `recall.synonyms` in its config.
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
    deadline, Frist, plazo, fecha límite, échéance, date limite, 截止, 期限;
    schedule, calendar, Zeitplan, Kalender, calendario, horario, calendrier, 日程, 日历;
    holiday, vacation, time off, Urlaub, Feiertag, vacaciones, vacances, congé, 假期;
    colleague, coworker, Kollege, colega, compañero, collègue, 同事;
    manager, boss, Chef, Vorgesetzter, jefe, responsable, patron, 经理, 老板;
    customer, client, Kunde, cliente, 客户, 顾客;
    supplier, vendor, Lieferant, Anbieter, proveedor, fournisseur, 供应商;
    order, purchase, buy, bestellen, Bestellung, kaufen, pedido, comprar, commande, commander, acheter, 订单, 购买;
    delivery, shipping, shipment, Lieferung, Versand, entrega, envío, livraison, 交货, 发货;
    invoice, bill, billing, Rechnung, factura, facture, 发票;
    payment, pay, zahlen, Zahlung, pagar, pago, payer, paiement, 付款, 支付;
    price, cost, fee, Preis, Kosten, Gebühr, precio, coste, tarifa, prix, coût, tarif, 价格, 费用;
    bank, bank account, Bank, Konto, banco, cuenta bancaria, banque, 银行;
    budget, Budget, presupuesto, 预算;
    contract, agreement, Vertrag, Vereinbarung, contrato, acuerdo, contrat, 合同, 协议;
    hire, recruit, einstellen, contratar, recruter, embaucher, 招聘;
    email, e-mail, mail, E-Mail, correo, courriel, 邮件;
    message, chat, Nachricht, mensaje, 消息;
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
        from memdir.read.tables import GLOSSARY

        synonyms = defaultdict(dict, {key: dict(others) for key, others in GLOSSARY.items()})
        _add_groups(synonyms, [(list(group), 1.0) for group in extra])
        _Lazy.glossaries[extra] = dict(synonyms)
    return _Lazy.glossaries[extra]


def build_glossary() -> dict[str, dict[str, tuple[str, float]]]:
    """The built-in glossary's table (see _glossary), as `make docs` ships it."""
    synonyms: dict[str, dict[str, tuple[str, float]]] = defaultdict(dict)
    _add_groups(synonyms, [(group.split(","), _SYNONYM_WEIGHT) for group in _GLOSSARY.split(";") if group.strip()])
    return dict(synonyms)


def _add_groups(synonyms: dict[str, dict[str, tuple[str, float]]], groups: Sequence[tuple[list[str], float]]) -> None:
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


def _compound_head(word: str) -> str | None:
    """The term of a longer word that starts with `word`, when it is not `word`'s own term. The stemmer
    cuts a long word to six letters, so a German compound ("Terminplanung") becomes "termin", while
    "Termin" alone first loses its ending and becomes "termi": without this the two would never meet."""
    tokens = list(term_sequence(word))
    if len(tokens) != 1 or len(tokens[0][1]) < 6 or is_cjk(tokens[0][0]):
        return None
    head = tokens[0][1][:6]
    return head if head != tokens[0][0] else None


# A word written as a name: a capital inside a sentence ("What did Priya say?"), or capitals throughout
# ("NASA"). A sentence's first word is capitalised whatever it is, so it says nothing.
_WORD = LazyPattern(r"[^\W\d_][^\W_]*")
_SENTENCE_END = frozenset(".?!:;\n")


def named_words(query: str) -> frozenset[str]:
    """The words of `query` written as names, as the query's slots show them (folded, `Slot.shown`)."""
    named: set[str] = set()
    for found in _WORD.finditer(query):
        word = found.group()
        before = query[: found.start()].rstrip(" \t\"'“‘(«")
        capitalised = word[0].isupper() and before != "" and before[-1] not in _SENTENCE_END
        if capitalised or (len(word) > 1 and word.isupper()):
            named.update(shown for _, shown in term_sequence(word))
    return frozenset(named)


@dataclass(frozen=True)
class Slot:
    """One query term, with the terms that count for it (itself, synonyms) and what each weighs."""

    shown: str  # the query's own word(s)
    alternatives: dict[str, tuple[float, str]]  # term -> (weight, word shown when it is what matched)
    # A name the best matches lend (see _neighbours) counts only in other memories' heads: a memory
    # whose name or description carries it is about it, one that mentions it in passing is not.
    heads_only: bool = False
    lenders: frozenset[int] = frozenset()  # and never for the memories that lent it
    pair: bool = False  # two adjacent query words: evidence the gate already has from the words apart


def query_slots(query: str, extra_synonyms: tuple[tuple[str, ...], ...], synonyms: bool = True) -> list[Slot]:
    prior, glossary = general_prior(), _glossary(extra_synonyms)
    tokens = list(term_sequence(query))
    shown: dict[str, str] = {}
    for term, text in tokens:
        shown.setdefault(term, text)
    words = [term for term, _ in tokens if not is_cjk(term)]
    if len(words) < len(tokens):  # CJK text: its common words are weighed by their own list
        prior = prior | _cjk_prior()
    weights = {term: prior.get(term, 1.0) for term, _ in tokens if not (term.isdigit() and len(term) <= 2)}
    for a, b in itertools.pairwise(words):
        if a != b:
            weights.setdefault(f"{a}_{b}", max(prior.get(a, 1.0), prior.get(b, 1.0)))
            shown.setdefault(f"{a}_{b}", f"{shown[a]} {shown[b]}")
    slots = []
    for term, weight in weights.items():
        alternatives = {term: (weight, shown[term])}
        if synonyms and (head := _compound_head(shown[term])) and head not in weights:
            alternatives[head] = (weight * _SYNONYM_WEIGHT, f"{shown[term]}-")  # "Termin" finds "Terminplanung"
        if synonyms:
            for other, (word, factor) in glossary.get(term, {}).items():
                if other not in weights and other not in alternatives:
                    alternatives[other] = (weight * factor, word)
        slots.append(Slot(shown[term], alternatives, pair="_" in term))
    return slots
