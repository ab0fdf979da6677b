// Gives the precompiled-header target a source file; the header itself is engine/src/pch.hpp.
