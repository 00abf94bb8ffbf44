"""Schema.org types as the entity-card categories (A2E §1), and how well an item's types
make it the business a page describes (a business, then an organization, then a place)."""

SCHEMA_PREFIXES = ("http://schema.org/", "https://schema.org/")
# Schema.org types onto the entity-card categories (A2E §1). Types not listed that end in
# "Store" are retail, in "Restaurant" a restaurant.
CATEGORY_BY_TYPE = {
    **dict.fromkeys(
        (
            "FoodEstablishment",
            "Restaurant",
            "Bakery",
            "BarOrPub",
            "Brewery",
            "CafeOrCoffeeShop",
            "Distillery",
            "FastFoodRestaurant",
            "IceCreamShop",
            "Winery",
        ),
        "restaurant",
    ),
    **dict.fromkeys(
        (
            "LodgingBusiness",
            "Hotel",
            "Motel",
            "Hostel",
            "BedAndBreakfast",
            "Campground",
            "Resort",
            "VacationRental",
        ),
        "hotel",
    ),
    **dict.fromkeys(
        (
            "HealthAndBeautyBusiness",
            "BeautySalon",
            "DaySpa",
            "HairSalon",
            "NailSalon",
            "TattooParlor",
        ),
        "beauty",
    ),
    **dict.fromkeys(
        (
            "MedicalBusiness",
            "MedicalOrganization",
            "MedicalClinic",
            "Dentist",
            "Pharmacy",
            "Physician",
            "Hospital",
            "Optician",
            "DiagnosticLab",
            "VeterinaryCare",
        ),
        "health",
    ),
    **dict.fromkeys(
        (
            "SportsActivityLocation",
            "ExerciseGym",
            "HealthClub",
            "SportsClub",
            "GolfCourse",
            "PublicSwimmingPool",
            "StadiumOrArena",
            "BowlingAlley",
            "SkiResort",
        ),
        "fitness",
    ),
    **dict.fromkeys(
        (
            "EntertainmentBusiness",
            "AdultEntertainment",
            "AmusementPark",
            "ArtGallery",
            "Casino",
            "ComedyClub",
            "MovieTheater",
            "NightClub",
            "MusicVenue",
            "Museum",
            "Zoo",
        ),
        "entertainment",
    ),
    **dict.fromkeys(
        (
            "EducationalOrganization",
            "School",
            "Preschool",
            "CollegeOrUniversity",
            "ChildCare",
            "Library",
        ),
        "education",
    ),
    **dict.fromkeys(("RealEstateAgent",), "real_estate"),
    **dict.fromkeys(
        (
            "TaxiService",
            "TravelAgency",
            "AutoRental",
            "BusStation",
            "TaxiStand",
            "TrainStation",
            "Airport",
        ),
        "transport",
    ),
    **dict.fromkeys(("Store", "AutoPartsStore", "ShoppingCenter"), "retail"),
    **dict.fromkeys(
        (
            "ProfessionalService",
            "LegalService",
            "Attorney",
            "Notary",
            "FinancialService",
            "AccountingService",
            "BankOrCreditUnion",
            "InsuranceAgency",
            "HomeAndConstructionBusiness",
            "Electrician",
            "Plumber",
            "Locksmith",
            "HVACBusiness",
            "AutomotiveBusiness",
            "AutoRepair",
            "DryCleaningOrLaundry",
            "EmploymentAgency",
            "GovernmentOffice",
        ),
        "services",
    ),
}
BUSINESS, ORGANIZATION, PLACE = 0, 1, 2
ORGANIZATION_TYPES = {"Organization", "Corporation", "NGO", "OnlineBusiness"}
PLACE_TYPES = {"Place", "LocalBusiness"}


def local_name(name: str) -> str:
    for prefix in SCHEMA_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name.rsplit(":", 1)[-1] if name.startswith("schema:") else name


def item_types(item: dict) -> list[str]:
    raw = item.get("@type")
    raw = raw if isinstance(raw, list) else [raw]
    return [local_name(t) for t in raw if isinstance(t, str)]


def category_of(types: list[str]) -> str:
    for name in types:
        if name in CATEGORY_BY_TYPE:
            return CATEGORY_BY_TYPE[name]
        if name.endswith("Store"):
            return "retail"
        if name.endswith("Restaurant"):
            return "restaurant"
    return ""


def rank_of(types: list[str]) -> int | None:
    if category_of(types) or "LocalBusiness" in types:
        return BUSINESS
    if ORGANIZATION_TYPES & set(types):
        return ORGANIZATION
    if "Place" in types:
        return PLACE
    return None
