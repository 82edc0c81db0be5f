package interview

import (
	"errors"
	"fmt"
	"strings"
)

// Answer is the model answer of one prompt of docs/interview.md.
type Answer struct {
	Heading string
	Prompt  string
	Strong  string
	Weak    string
	WhyWeak string
}

// ErrNoAnswer is returned when docs/interview.md has no usable section for
// a scenario.
var ErrNoAnswer = errors.New("no model answer")

// ParseAnswers reads the model answers out of docs/interview.md: each
// "## heading" section with its *Prompt:*, **Strong answer.**, **Weak
// answer.** and *Why it is weak:* paragraphs.
func ParseAnswers(markdown string) map[string]Answer {
	out := map[string]Answer{}
	var cur *Answer
	var field *string
	flush := func() {
		if cur != nil && cur.Prompt != "" && cur.Strong != "" {
			for _, s := range []*string{&cur.Prompt, &cur.Strong, &cur.Weak, &cur.WhyWeak} {
				*s = strings.TrimSpace(*s)
			}
			out[cur.Heading] = *cur
		}
	}
	for _, line := range strings.Split(markdown, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			flush()
			cur = &Answer{Heading: strings.TrimSpace(strings.TrimPrefix(line, "## "))}
			field = nil
			continue
		case cur == nil:
			continue
		case strings.HasPrefix(line, "*Prompt:*"):
			field, line = &cur.Prompt, strings.TrimPrefix(line, "*Prompt:*")
		case strings.HasPrefix(line, "**Strong answer.**"):
			field, line = &cur.Strong, strings.TrimPrefix(line, "**Strong answer.**")
		case strings.HasPrefix(line, "**Weak answer.**"):
			field, line = &cur.Weak, strings.TrimPrefix(line, "**Weak answer.**")
		case strings.HasPrefix(line, "*Why it is weak:*"):
			field, line = &cur.WhyWeak, strings.TrimPrefix(line, "*Why it is weak:*")
		case strings.HasPrefix(line, "*Lab:*") || strings.HasPrefix(line, "*Labs:*"):
			field = nil
			continue
		}
		if field != nil {
			if strings.TrimSpace(line) == "" && (field == &cur.Prompt || field == &cur.WhyWeak) && strings.TrimSpace(*field) != "" {
				field = nil // one paragraph each; what follows is not part of it
				continue
			}
			*field += line + "\n"
		}
	}
	flush()
	return out
}

// AnswerFor is the model answer of a scenario.
func AnswerFor(answers map[string]Answer, s Scenario) (Answer, error) {
	a, ok := answers[s.Heading]
	if !ok || a.Weak == "" {
		return Answer{}, fmt.Errorf("%w for %q: docs/interview.md has no section %q with a prompt, a strong and a weak answer", ErrNoAnswer, s.ID, s.Heading)
	}
	return a, nil
}
