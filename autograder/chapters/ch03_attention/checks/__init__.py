"""The checks of chapter 3: one module per stage and the parts they share.

``s1_softmax`` .. ``s8_efficiency`` hold each stage's checks and end with its ``STAGE``
(the chapter's ``stage_modules``).
The module stages (3-7) share, from lowest to highest: :mod:`.spec` (the module contract and the
grader's weights), :mod:`.diagnosis` (naming the known mistake a wrong output matches),
:mod:`.properties` (what every right attention module does) and :mod:`.structure` (the layers and
buffers a module must register). :mod:`.policy` is the call policy (no library attention where
the stage teaches it).
"""
