"""The A2A app: cards validated, mapped and served as published, registration (by card, in
bulk, by domain), card versions, the registry's own A2A face and the queue relay.

Django's files at the top (``apps``, ``models``, ``admin``, ``urls``, ``extensions``,
``receivers``, ``signals``, ``tasks``, ``demo``, ``migrations``, ``management``); the rest in
rooms, lowest first: ``cards``, ``versions``, ``serving``, ``registration``, ``face``,
``relay`` (ARCHITECTURE.md). ``import a2a`` is always the a2a-sdk package.
"""
